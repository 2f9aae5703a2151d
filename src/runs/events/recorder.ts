import type { RunDeps } from '../ports';
import type { PendingRunEvent } from './log';
import type { RunObserver, StepEvent } from '../../engine/run-control';
import type { LifecycleRun } from '../run-lifecycle';

const FLUSH_EVERY_MS = 200;
/** Past this many buffered events a flush starts at once (a wide fan-out). */
const FLUSH_AT = 200;

/**
 * Collects a run's step and output events from the engine and appends them to the run's log in
 * batches (one statement per FLUSH_EVERY_MS at most), merging consecutive output deltas of a step.
 * Memory per run is the unflushed batch only. Flushes are serialized, so seqs follow call order.
 * The run's subscribers hear of a step event once it is logged, with its `seq` (webhook `step` messages),
 * and of an approval step that starts waiting at once.
 */
export class RunEventRecorder implements RunObserver {
  private pending: PendingRunEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly deps: RunDeps,
    private readonly uid: string,
    private readonly attempt: number,
    private readonly run?: LifecycleRun,
  ) {}

  step(event: StepEvent): void {
    this.push({ kind: 'step', data: { ...event } });
    // A run that starts waiting for a person may wait for days: its readers hear of it now.
    if (event.status === 'waiting') {
      void this.flush();
      if (this.run) this.deps.lifecycle.emit('waiting', { run: this.run, step: event });
    }
  }

  /** Whether a subscriber wants the run's step events (then they are told each one's seq once it is logged). */
  private get subscribersWantSteps(): boolean {
    return this.run !== undefined && this.deps.lifecycle.wantsSteps(this.run);
  }

  /** Step events of a batch whose last event got `lastSeq`, with their own seqs, to the run's subscribers. */
  private logged(batch: readonly PendingRunEvent[], lastSeq: number): void {
    const run = this.run;
    if (!run || !this.subscribersWantSteps) return;
    batch.forEach((event, i) => {
      if (event.kind !== 'step') return;
      this.deps.lifecycle.emit('step', {
        run,
        event: { ...(event.data as unknown as StepEvent), seq: lastSeq - batch.length + 1 + i },
      });
    });
  }

  output(stepId: string, delta: string): void {
    if (!delta) return;
    const last = this.pending[this.pending.length - 1];
    if (last?.kind === 'output' && last.data.step_id === stepId) last.data.delta = `${String(last.data.delta)}${delta}`;
    else this.push({ kind: 'output', data: { step_id: stepId, delta } });
  }

  /** Writes what is buffered; resolves when every earlier batch is written. Never rejects. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0) {
      this.chain = this.chain.then(async () => {
        try {
          const seq = await this.deps.runService.eventAppends.submit('', {
            uid: this.uid,
            attempt: this.attempt,
            events: batch,
          });
          if (seq !== null) this.logged(batch, seq);
          if (seq !== null && !this.deps.bus.sqlChannel) await this.deps.bus.publish({ uid: this.uid, seq });
        } catch (error) {
          this.deps.log.warn({ err: error, run: this.uid, events: batch.length }, 'could not record run events');
        }
      });
    }
    return this.chain;
  }

  /**
   * Stops taking events (nothing may follow the run's terminal state) and hands back those not yet
   * written, once every earlier batch is: the statement that ends the run logs them (finishRuns in src/runs/transitions.ts),
   * which saves a round trip per run.
   */
  async closeForEnding(): Promise<PendingRunEvent[]> {
    // A webhook that wants step events is told their seqs: they are logged here, not with the end.
    if (this.subscribersWantSteps) await this.flush();
    this.closed = true;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const rest = this.pending;
    this.pending = [];
    await this.chain;
    return rest;
  }

  private push(event: PendingRunEvent): void {
    if (this.closed) return;
    this.pending.push(event);
    if (this.pending.length >= FLUSH_AT) void this.flush();
    else
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, FLUSH_EVERY_MS);
  }
}
