import type { StepEvent } from '../engine/run-control';
import type { Services } from '../services';

/** The run as the job knows it when a hook is called. */
export interface HookedRun {
  uid: string;
  user_uid: string;
  /** The run's webhook events (null without a webhook), when the job has them. */
  webhook_events?: string[] | null;
}

/**
 * What other domains do when a run starts, emits a step event or ends (src/runs/execute.ts
 * calls these through ./run-hooks.ts, which lists them). Hooks are synchronous and never throw:
 * whatever they start runs on its own, so a hook can never slow or fail a run.
 */
export interface RunLifecycleHook {
  onStarted?(services: Services, run: HookedRun): void;
  onStep?(services: Services, run: HookedRun, event: StepEvent): void;
  onEnded?(services: Services, run: HookedRun): void;
}
