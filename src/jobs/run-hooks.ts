import type { StepEvent } from '../engine/run-control';
import type { Logger } from '../logger';

/** The run a hook is told about; hooks load what else they need. */
export interface RunRef { uid: string; userUid: string; state: 'RUNNING' | 'COMPLETED' | 'EXCEPTION' }

/**
 * What other domains (webhooks) do when a run starts (its first claim), ends, or passes a step.
 * Called by src/jobs/execute-run.job.ts after the transition has committed; a hook's failure is
 * logged and never touches the run.
 */
export interface RunLifecycleHook {
  onStarted?(run: RunRef): void | Promise<void>;
  onEnded?(run: RunRef): void | Promise<void>;
  onStep?(run: RunRef, event: StepEvent): void | Promise<void>;
}

export const runLifecycleHooks: RunLifecycleHook[] = [];

export async function callRunHooks<K extends keyof RunLifecycleHook>(log: Logger, name: K, ...args: Parameters<NonNullable<RunLifecycleHook[K]>>): Promise<void> {
  for (const hook of runLifecycleHooks) {
    try {
      await (hook[name] as ((...a: typeof args) => void | Promise<void>) | undefined)?.(...args);
    } catch (error) {
      log.warn({ err: error, hook: name }, 'run lifecycle hook failed');
    }
  }
}
