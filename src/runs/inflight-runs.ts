import type { RunDeps } from './ports';
import type { EngineDeps } from '../engine/ports';
import { CircuitRun } from '../models/CircuitRun';
import { executeClaimed, RunHandedBack, RunLost, type RunWorkerIdentity, type RunTaker } from './execute';
import {
  claimRun,
  handBackRuns,
  heartbeatRuns,
  isLastAttempt,
  wakeWaitingRuns,
  type ClaimedRun,
  type ClaimFairness,
  type ClaimRoom,
} from './transitions';
import { queueRuns } from './queue-runs';
import { RunAborted } from '../engine/run-control';

/** The most waiting runs one wake queues again (more follow with the next run that ends, or the sweep). */
const WAKE_BATCH = 100;

interface HeldRun {
  attempt: number;
  control: AbortController;
  done: Promise<void>;
}

export interface InflightRunsOptions {
  deps: RunDeps;
  /** What the engine executes the runs with (built once by createRunWing). */
  engine: EngineDeps;
  worker: RunWorkerIdentity;
  /** RUN_MAX_INFLIGHT: runs this worker executes at once; one more waits PROVISIONED for room. */
  maxInflight: number;
  /** USER_MAX_CONCURRENT_RUNS: one user's runs executing at once in all workers (counted in PostgreSQL). */
  userMaxConcurrent: number;
  /** The most of maxInflight one user's runs may hold here (RUN_USER_INFLIGHT_SHARE_PERCENT of it). */
  userShare: number;
  /** How often the claims are kept alive (one statement for all of them). */
  heartbeatEveryMs: number;
}

/**
 * The runs one worker process executes (docs/runs.md, Waiting is cheap). A run's job only hands the run over: it is
 * claimed here and executed detached from the job, all in one event loop, so a run that waits on an
 * upstream, a model or a person costs memory, not a job slot, a connection or CPU (CPU-heavy user
 * logic stays bounded by the sandbox pool). One heartbeat statement a period keeps every claim alive
 * and hears missed cancels; a run whose worker dies is queued again by any other worker's sweep
 * (claimOrphanedRuns) and goes on from its journal. A stopping worker gives its runs back at once (RUN_DRAIN_MS), to be
 * taken over at once by another worker, or by this one's next start.
 */
export class InflightRuns implements RunTaker {
  private readonly runs = new Map<string, HeldRun>();
  /** Runs claimed here and not yet finished, in all and per user (fair shares, docs/fairness.md). */
  private held = 0;
  private readonly heldByUser = new Map<string, number>();
  /** Runs on their last attempt executing here (at most one: ClaimRoom.lastAttempts). */
  private lastAttempts = 0;
  private closing = false;
  /** Runs whose jobs reached this worker while it was stopping: queued again once its queue has stopped. */
  private readonly arrivedWhileClosing = new Set<string>();
  private readonly beat: NodeJS.Timeout;
  private beating: Promise<void> | undefined;
  private waking: Promise<void> | undefined;
  private wakeAgain = false;
  private readonly fairness: ClaimFairness = {
    room: () => this.room(),
    claimed: (claims) => {
      for (const claim of claims) {
        this.hold(claim.user_uid, 1);
        if (isLastAttempt(claim)) this.lastAttempts += 1;
      }
    },
  };

  constructor(private readonly options: InflightRunsOptions) {
    this.beat = setInterval(() => {
      this.beating ??= this.heartbeat().finally(() => {
        this.beating = undefined;
      });
    }, options.heartbeatEveryMs);
    this.beat.unref();
  }

  /** Runs executing in this process now. */
  get size(): number {
    return this.runs.size;
  }

  /**
   * Claims the run if its user has a slot (USER_MAX_CONCURRENT_RUNS), room in their share of this
   * worker and this worker has room; otherwise it stays PROVISIONED (slot_wait) and is queued again
   * once a slot frees (wake). Either way the job ends here: a run waiting for a slot holds no job slot,
   * so one user's backlog never stands between another user's run and this worker.
   */
  async take(uid: string): Promise<void> {
    const { deps, worker } = this.options;
    if (this.closing) {
      // Its job ends with this call: the run is queued again once this worker's queue has stopped
      // (queued now, this worker's own queue would take it again).
      this.arrivedWhileClosing.add(uid);
      return;
    }
    const held = this.runs.get(uid);
    // A run this worker is parking or giving back may be woken at once: it is claimed again as a new attempt
    // (the stopping one's writes are fenced by its attempt), without waiting for that attempt to wind down.
    if (held && !held.control.signal.aborted) return;
    const claim = await claimRun(
      deps.runService.claims,
      uid,
      deps.config.jobLockLifetimeMs,
      deps.bus.sqlChannel,
      worker.current(),
      this.fairness,
    );
    if (claim) this.start(claim);
  }

  private room(): ClaimRoom {
    const { maxInflight, userMaxConcurrent, userShare } = this.options;
    const userRoom = new Map<string, number>();
    for (const [user, count] of this.heldByUser) userRoom.set(user, Math.max(0, userShare - count));
    return {
      userMax: userMaxConcurrent,
      room: maxInflight - this.held,
      shareMax: userShare,
      userRoom,
      lastAttempts: this.lastAttempts > 0 ? 0 : 1,
    };
  }

  private hold(user: string, delta: number): void {
    this.held += delta;
    const count = (this.heldByUser.get(user) ?? 0) + delta;
    if (count > 0) this.heldByUser.set(user, count);
    else this.heldByUser.delete(user);
  }

  private start(claim: ClaimedRun): void {
    const { deps } = this.options;
    const control = new AbortController();
    const held: HeldRun = { attempt: claim.attempt, control, done: Promise.resolve() };
    this.runs.set(claim.uid, held);
    // Counted when claimed (fairness.claimed); it stops counting as soon as the attempt is over, so a run taken
    // again at once (below) is judged afresh.
    let lastAttempt = isLastAttempt(claim);
    const attemptOver = () => {
      if (lastAttempt) this.lastAttempts -= 1;
      lastAttempt = false;
    };
    held.done = executeClaimed(deps, this.options.engine, claim, control, () => this.wake())
      .then(async (outcome) => {
        if (outcome === 'parkRefused') {
          // A wait was resolved while the run was parking: it goes on at once, as a new attempt.
          if (this.runs.get(claim.uid) === held) this.runs.delete(claim.uid);
          attemptOver();
          if (!this.closing) await this.take(claim.uid);
          return;
        }
        if (outcome !== 'refused') return;
        // A refused end of a run that is PROVISIONED again: a crash of PostgreSQL rolled the claim back
        // (claims commit asynchronously, src/db/async-commit.ts), so it is claimed and executed anew.
        const run = await CircuitRun.findByPk(claim.uid, { attributes: ['uid', 'state'] });
        if (run?.state !== 'PROVISIONED' || this.closing) return;
        if (this.runs.get(claim.uid) === held) this.runs.delete(claim.uid);
        attemptOver();
        await this.take(claim.uid);
      })
      .catch((error: unknown) => {
        // Left to the sweep: the run looks orphaned once this worker's heartbeat stops naming it.
        deps.log.error({ err: error, run: claim.uid }, 'run execution failed unexpectedly');
      })
      .finally(() => {
        this.hold(claim.user_uid, -1);
        attemptOver();
        if (this.runs.get(claim.uid) === held) this.runs.delete(claim.uid);
        this.wake();
      });
  }

  /**
   * Queues again runs that waited for a slot and now fit (a run of theirs ended, or room freed here):
   * one statement at a time, a wake asked for meanwhile follows it. Also called by the sweep, for slots
   * freed where no worker of this user's runs noticed (a cancel before start, a dead worker).
   */
  wake(): void {
    if (this.closing) return;
    if (this.waking) {
      this.wakeAgain = true;
      return;
    }
    this.waking = this.wakeOnce().finally(() => {
      this.waking = undefined;
      if (this.wakeAgain) {
        this.wakeAgain = false;
        this.wake();
      }
    });
  }

  private async wakeOnce(): Promise<void> {
    const { deps, maxInflight, userMaxConcurrent, userShare } = this.options;
    const full = [...this.heldByUser].filter(([, count]) => count >= userShare).map(([user]) => user);
    try {
      const uids = await wakeWaitingRuns(
        deps.sequelize,
        userMaxConcurrent,
        Math.min(WAKE_BATCH, maxInflight - this.held),
        full,
      );
      if (uids.length === 0) return;
      await queueRuns(deps, uids);
    } catch (error) {
      // Runs not yet woken are woken by the next wake or the sweep; runs woken but not queued are
      // queued again by the sweep once they look stuck (sweepTimings.stuckAfterMs).
      deps.log.warn({ err: error }, 'could not queue the runs waiting for a slot');
    }
  }

  private async heartbeat(): Promise<void> {
    const { deps, worker } = this.options;
    // An attempt that is stopping (parked, given back, canceled) keeps nothing alive: its row must look free at once.
    const held = [...this.runs]
      .filter(([, run]) => !run.control.signal.aborted)
      .map(([uid, run]) => ({ uid, attempt: run.attempt, run }));
    if (held.length === 0) return;
    try {
      const alive = await heartbeatRuns(deps.sequelize, held, worker.current().backendPid);
      for (const { uid, run } of held) {
        if (this.runs.get(uid) !== run || run.control.signal.aborted) continue;
        const answer = alive.get(uid);
        if (!answer) run.control.abort(new RunLost());
        else if (answer.cancel) run.control.abort(new RunAborted('Canceled'));
      }
    } catch (error) {
      deps.log.warn({ err: error, runs: held.length }, 'run heartbeat failed');
    }
  }

  /**
   * Stops taking runs, waits up to `drainMs` (0: not at all) for those executing, then gives the rest back. Returns
   * the runs to queue again once this worker's queue has stopped: those given back and those whose
   * jobs arrived meanwhile.
   */
  async close(drainMs: number): Promise<string[]> {
    const { deps } = this.options;
    this.closing = true;
    clearInterval(this.beat);
    await this.waking;
    const all = () => Promise.all([...this.runs.values()].map((run) => run.done));
    if (drainMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        all(),
        new Promise((resolve) => {
          timer = setTimeout(resolve, drainMs);
        }),
      ]);
      clearTimeout(timer);
    }
    await this.beating;
    const left = [...this.runs].map(([uid, run]) => ({ uid, attempt: run.attempt, run }));
    if (left.length === 0) return [...this.arrivedWhileClosing];
    for (const { run } of left) run.control.abort(new RunHandedBack());
    await all();
    try {
      const given = await handBackRuns(deps.sequelize, left);
      deps.log.warn(
        { runs: given.length },
        'stopped with runs still executing; they go on from their journal in the next worker',
      );
      return [...given, ...this.arrivedWhileClosing];
    } catch (error) {
      deps.log.warn(
        { err: error, runs: left.length },
        'could not give back the runs still executing; the sweep takes them over',
      );
      return [...this.arrivedWhileClosing];
    }
  }
}
