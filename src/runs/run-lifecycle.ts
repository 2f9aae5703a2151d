import type { Logger } from '../logger';
import type { StepEvent } from '../engine/run-control';
import type { RunError, RunState } from '../domain/runs';

/**
 * What happens to a run, announced inside this process to whoever the composition subscribed
 * (src/runtime.ts: webhooks, run metrics). Not the run event *log* (./events/log.ts, what readers of a
 * run see) and not the bus (./events/bus.ts, state changes across processes): these are in-process
 * calls, made once per thing that happened, in the process where it happened.
 */

/** A run as an event names it: its uid, its owner, and its webhook events when the announcer knows them (null: no webhook). */
export interface LifecycleRun {
  uid: string;
  user_uid: string;
  webhook_events?: string[] | null;
}

export interface RunLifecycleEvents {
  /** A run was accepted: a query's run, or each admitted run of a batch (one refused for credits is not announced). */
  created: { run: LifecycleRun };
  /** A run's first attempt began executing. */
  started: { run: LifecycleRun };
  /** A step event was logged, with its `seq` in the run's log (only to subscribers that want the run's steps). */
  step: { run: LifecycleRun; event: StepEvent & { seq: number } };
  /** A step started waiting: for a person (an approval), a signal or a time (the event's `for`). */
  waiting: { run: LifecycleRun; step: StepEvent };
  /** A run ended, charged once: its state, error, charge, and when it was created (for durations). */
  ended: {
    run: LifecycleRun;
    state: RunState;
    attempt: number;
    error: RunError | null;
    charged: number;
    createdAt: Date | string | null;
  };
}

export type RunLifecycleEvent = keyof RunLifecycleEvents;
export type RunLifecycleListener<K extends RunLifecycleEvent> = (event: RunLifecycleEvents[K]) => void;

/** What a subscriber may do: listen. `step` listeners say which runs they want steps of (logging them early costs a statement). */
export interface RunLifecycleSubscriptions {
  on<K extends Exclude<RunLifecycleEvent, 'step'>>(name: K, listener: RunLifecycleListener<K>): void;
  onStep(wants: (run: LifecycleRun) => boolean, listener: RunLifecycleListener<'step'>): void;
}

/**
 * The typed listener map. Listeners are synchronous and never slow or fail a run: what they start
 * runs on its own, and whatever they throw is caught and logged here.
 */
export class RunLifecycle implements RunLifecycleSubscriptions {
  private readonly listeners: { [K in RunLifecycleEvent]: RunLifecycleListener<K>[] } = {
    created: [],
    started: [],
    step: [],
    waiting: [],
    ended: [],
  };
  private readonly stepWants: ((run: LifecycleRun) => boolean)[] = [];

  constructor(private readonly log: Logger) {}

  on<K extends Exclude<RunLifecycleEvent, 'step'>>(name: K, listener: RunLifecycleListener<K>): void {
    (this.listeners[name] as RunLifecycleListener<K>[]).push(listener);
  }

  onStep(wants: (run: LifecycleRun) => boolean, listener: RunLifecycleListener<'step'>): void {
    this.stepWants.push(wants);
    this.listeners.step.push((event) => {
      if (wants(event.run)) listener(event);
    });
  }

  /** Whether any subscriber wants this run's step events (then the recorder logs them before the end, to give their seqs). */
  wantsSteps(run: LifecycleRun): boolean {
    return this.stepWants.some((wants) => {
      try {
        return wants(run);
      } catch {
        return false;
      }
    });
  }

  emit<K extends RunLifecycleEvent>(name: K, event: RunLifecycleEvents[K]): void {
    for (const listener of this.listeners[name] as RunLifecycleListener<K>[]) {
      try {
        listener(event);
      } catch (error) {
        this.log.warn({ err: error, run: event.run.uid, event: name }, 'a run event subscriber failed');
      }
    }
  }
}
