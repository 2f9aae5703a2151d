import type { StepEvent } from '../engine/run-control';
import type { Services } from '../services';
import { webhookRunHooks } from '../webhooks/run-hooks';
import type { HookedRun, RunLifecycleHook } from './lifecycle-hook';

export type { HookedRun } from './lifecycle-hook';

const hooks: RunLifecycleHook[] = [webhookRunHooks];

export const runLifecycleHooks = {
  started(services: Services, run: HookedRun): void {
    for (const hook of hooks) hook.onStarted?.(services, run);
  },
  step(services: Services, run: HookedRun, event: StepEvent): void {
    for (const hook of hooks) hook.onStep?.(services, run, event);
  },
  ended(services: Services, run: HookedRun): void {
    for (const hook of hooks) hook.onEnded?.(services, run);
  },
};
