/**
 * What the job layer and the engine agree on to watch, bound and stop a run (DESIGN §7, §8):
 * the failure codes, the abort reason, step events and the budget.
 */

import type { RunErrorCode } from '../models/CircuitRun';

export type { RunErrorCode };

/** Thrown as AbortSignal reason by the job layer to stop a run. */
export class RunAborted extends Error {
  constructor(readonly code: 'Canceled' | 'DeadlineExceeded') {
    super(code === 'Canceled' ? 'the run was canceled' : 'the run passed its deadline');
    this.name = 'RunAborted';
  }
}

export interface StepEvent {
  step_id: string;
  kind: string;
  status: 'started' | 'completed' | 'failed' | 'retrying' | 'waiting';
  started_at: string;
  ended_at?: string;
  credits?: number;
  error?: string;
  /** retrying: the attempt that failed (1-based) and when the next one starts (DESIGN §9.3). */
  attempt?: number;
  retry_at?: string;
  /** waiting (an approval step, DESIGN §9.4): what the person is asked, and when it times out. */
  prompt?: string;
  expires_at?: string;
  /** completed from the step cache or a durable record (DESIGN §9.5). */
  cached?: boolean;
}

/** Sync, cheap, never throws. */
export interface RunObserver {
  step(event: StepEvent): void;
  /** llm text deltas, already coalesced (≤ ~20/s per step). */
  output(stepId: string, delta: string): void;
}

export interface RunBudget {
  /** RUN_MAX_STEPS, counted over the whole run including embedded runs. */
  maxSteps: number;
  /** RUN_MAX_RESULT_BYTES, checked on the final result_blob. */
  maxResultBytes: number;
  /** Reserve credits before a step that costs credits starts; false = cannot be covered → run ends InsufficientCredits. */
  hold(credits: number): Promise<boolean>;
}

/**
 * A run that failed. `credits` is what its finished steps cost (model tokens are spent either way);
 * the message is safe to show the run's owner: no stack, key, header value or internal address.
 */
export class ExecutionFailure extends Error {
  constructor(message: string, readonly credits: number, readonly stepId?: string, readonly code: RunErrorCode = 'StepFailed') {
    super(message);
    this.name = 'ExecutionFailure';
  }
}

/** The code a run ends with when its signal fired: the job layer's RunAborted, else Internal. */
export function abortCode(reason: unknown): RunErrorCode {
  return reason instanceof RunAborted ? reason.code : 'Internal';
}
