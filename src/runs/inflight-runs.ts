import type { Services } from '../services';
import { CircuitRun } from '../models/CircuitRun';
import { executeClaimed, RunHandedBack, type RunWorkerIdentity, type RunTaker } from './execute';
import { claimRun, handBackRuns, heartbeatRuns, type ClaimedRun } from './transitions';
import { RunAborted } from '../engine/run-control';

interface HeldRun {
  attempt: number;
  control: AbortController;
  done: Promise<void>;
}

export interface InflightRunsOptions {
  services: Services;
  worker: RunWorkerIdentity;
  /** RUN_MAX_INFLIGHT: runs this worker executes at once; a job for one more waits for room. */
  maxInflight: number;
  /** How often the claims are kept alive (one statement for all of them). */
  heartbeatEveryMs: number;
}

/**
 * The runs one worker process executes (DESIGN §9.1). A run's job only hands the run over: it is
 * claimed here and executed detached from the job, all in one event loop, so a run that waits on an
 * upstream, a model or a person costs memory, not a job slot, a connection or CPU (CPU-heavy user
 * logic stays bounded by the sandbox pool). One heartbeat statement a period keeps every claim alive
 * and hears missed cancels; a run whose worker dies is queued again by any other worker's sweep
 * (claimOrphanedRuns) and goes on from its journal. A stopping worker waits for its runs a while, then
 * gives the rest back, to be taken over at once by another worker, or by this one's next start.
 */
export class InflightRuns implements RunTaker {
  private readonly runs = new Map<string, HeldRun>();
  private claiming = 0;
  private readonly waitingForRoom: Array<() => void> = [];
  private closing = false;
  /** Runs whose jobs reached this worker while it was stopping: queued again once its queue has stopped. */
  private readonly arrivedWhileClosing = new Set<string>();
  private readonly beat: NodeJS.Timeout;
  private beating: Promise<void> | undefined;

  constructor(private readonly options: InflightRunsOptions) {
    this.beat = setInterval(() => { this.beating ??= this.heartbeat().finally(() => { this.beating = undefined; }); }, options.heartbeatEveryMs);
    this.beat.unref();
  }

  /** Runs executing in this process now. */
  get size(): number { return this.runs.size; }

  async take(uid: string): Promise<void> {
    const { services, worker, maxInflight } = this.options;
    while (!this.closing && this.runs.size + this.claiming >= maxInflight) await new Promise<void>((resolve) => this.waitingForRoom.push(resolve));
    if (this.closing) {
      // Its job ends with this call: the run is queued again once this worker's queue has stopped
      // (queued now, this worker's own queue would take it again).
      this.arrivedWhileClosing.add(uid);
      return;
    }
    if (this.runs.has(uid)) return;
    this.claiming++;
    let claim: ClaimedRun | null;
    try {
      claim = await claimRun(services.runs.claims, uid, services.config.jobLockLifetimeMs, services.runEvents.sqlChannel, worker.current());
    } finally {
      this.claiming--;
    }
    if (claim) this.start(claim);
    else this.roomMade();
  }

  private start(claim: ClaimedRun): void {
    const { services } = this.options;
    const control = new AbortController();
    const held: HeldRun = { attempt: claim.attempt, control, done: Promise.resolve() };
    this.runs.set(claim.uid, held);
    held.done = executeClaimed(services, claim, control)
      .then(async (outcome) => {
        if (outcome !== 'refused') return;
        // A refused end of a run that is PROVISIONED again: a crash of PostgreSQL rolled the claim back
        // (claims commit asynchronously, src/db/async-commit.ts), so it is claimed and executed anew.
        const run = await CircuitRun.findByPk(claim.uid, { attributes: ['uid', 'state'] });
        if (run?.state !== 'PROVISIONED' || this.closing) return;
        if (this.runs.get(claim.uid) === held) this.runs.delete(claim.uid);
        await this.take(claim.uid);
      })
      .catch((error: unknown) => {
        // Left to the sweep: the run looks orphaned once this worker's heartbeat stops naming it.
        services.log.error({ err: error, run: claim.uid }, 'run execution failed unexpectedly');
      })
      .finally(() => {
        if (this.runs.get(claim.uid) === held) this.runs.delete(claim.uid);
        this.roomMade();
      });
  }

  private roomMade(): void {
    this.waitingForRoom.shift()?.();
  }

  private async heartbeat(): Promise<void> {
    const { services, worker } = this.options;
    const held = [...this.runs].map(([uid, run]) => ({ uid, attempt: run.attempt, run }));
    if (held.length === 0) return;
    try {
      const alive = await heartbeatRuns(services.sequelize, held, worker.current().backendPid);
      for (const { uid, run } of held) {
        if (this.runs.get(uid) !== run || run.control.signal.aborted) continue;
        const answer = alive.get(uid);
        if (!answer) run.control.abort(new Error('lost the run to another worker'));
        else if (answer.cancel) run.control.abort(new RunAborted('Canceled'));
      }
    } catch (error) {
      services.log.warn({ err: error, runs: held.length }, 'run heartbeat failed');
    }
  }

  /**
   * Stops taking runs, waits up to `drainMs` for those executing, then gives the rest back. Returns
   * the runs to queue again once this worker's queue has stopped: those given back and those whose
   * jobs arrived meanwhile.
   */
  async close(drainMs: number): Promise<string[]> {
    const { services } = this.options;
    this.closing = true;
    clearInterval(this.beat);
    for (const resolve of this.waitingForRoom.splice(0)) resolve();
    const all = () => Promise.all([...this.runs.values()].map((run) => run.done));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all(), new Promise((resolve) => { timer = setTimeout(resolve, drainMs); })]);
    clearTimeout(timer);
    await this.beating;
    const left = [...this.runs].map(([uid, run]) => ({ uid, attempt: run.attempt, run }));
    if (left.length === 0) return [...this.arrivedWhileClosing];
    for (const { run } of left) run.control.abort(new RunHandedBack());
    await all();
    try {
      const given = await handBackRuns(services.sequelize, left);
      services.log.warn({ runs: given.length }, 'stopped with runs still executing; they go on from their journal in the next worker');
      return [...given, ...this.arrivedWhileClosing];
    } catch (error) {
      services.log.warn({ err: error, runs: left.length }, 'could not give back the runs still executing; the sweep takes them over');
      return [...this.arrivedWhileClosing];
    }
  }
}
