/**
 * What the job layer and the engine agree on to watch, bound and stop a run (docs/runs.md, docs/limits.md):
 * the failure codes, the abort reason, step events and the budget.
 */

import type { RunErrorCode } from '../domain/runs';

export type { RunErrorCode };

/**
 * The abort reason of an attempt that stops without ending its run: the run goes on later, from its journal
 * (a stopping worker gives it back; a run that waits parks). Steps stopped by it are not reported as failed.
 */
export class RunSuspended extends Error {}

/** A run whose every step in flight waits (on time, a signal or a person) parks: it becomes a row until woken. */
export class RunParked extends RunSuspended {
  /** `waiting`: the paths this attempt waits on, none of them resolved as far as it knows. */
  constructor(readonly waiting: readonly string[]) {
    super('the run waits; it is parked until its signal, decision or timer');
    this.name = 'RunParked';
  }
}

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
  /** `agent_turn`, `tool_call`, `tool_result`: an agent step's progress (docs/agents.md), between its `started` and its end. */
  status: 'started' | 'completed' | 'failed' | 'retrying' | 'waiting' | 'agent_turn' | 'tool_call' | 'tool_result';
  /** waiting: on what (approval, signal, time). */
  for?: 'approval' | 'signal' | 'time';
  /** An agent step's events: the model turn (1-based); a tool call's tool and call id (the model's, or one the step gave it). */
  turn?: number;
  tool?: string;
  call_id?: string;
  started_at: string;
  ended_at?: string;
  credits?: number;
  error?: string;
  /** retrying: the attempt that failed (1-based) and when the next one starts. */
  attempt?: number;
  retry_at?: string;
  /** waiting: what the person is asked (an approval), and when the wait times out. */
  prompt?: string;
  expires_at?: string;
  /** completed from the step cache or a durable record. */
  cached?: boolean;
  /** completed from the original run of a recorded replay. */
  replayed?: boolean;
  /** The event's place in the run's log, once it is logged (what webhook `step` messages carry). */
  seq?: number;
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
  /**
   * The run's spend cap (docs/batches-and-budgets.md, Budgets), asked before `hold`: false when holding `credits` more would pass
   * the query's max_credits → the step does not start and the run ends BudgetExceeded. Absent: no cap.
   */
  withinCap?(credits: number): boolean;
  /** Gives back a `withinCap` reservation whose hold failed. */
  releaseCap?(credits: number): void;
}

/**
 * A run that failed. `credits` is what its finished steps cost (model tokens are spent either way);
 * the message is safe to show the run's owner: no stack, key, header value or internal address.
 * `stepsInFlight`: steps were still running when it failed, and what they had finished (an agent's turns
 * and tool calls, an embedded run's steps) is not in `credits`: the run's journal has it.
 */
export class ExecutionFailure extends Error {
  constructor(
    message: string,
    readonly credits: number,
    readonly stepId?: string,
    readonly code: RunErrorCode = 'StepFailed',
    readonly stepsInFlight = false,
  ) {
    super(message);
    this.name = 'ExecutionFailure';
  }
}

/** The code a run ends with when its signal fired: the job layer's RunAborted, else Internal. */
export function abortCode(reason: unknown): RunErrorCode {
  return reason instanceof RunAborted ? reason.code : 'Internal';
}

/** A step as an earlier attempt of the run recorded it (docs/runs.md, Durable steps), or a wait's state. */
export interface JournalEntry {
  status: 'completed' | WaitStatus;
  kind: string;
  output: unknown;
  credits: number;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  started_at: string;
  ended_at?: string;
  prompt?: string;
  expires_at?: string;
  /** What resolved a wait: an approval's decision, or `{data, received_at}` of a signal. */
  decision?: ApprovalDecision | SignalReceipt;
}

/** A wait's states: waiting, then resolved by a person (approved/rejected), a signal, or its timer. */
export type WaitStatus = 'waiting' | 'approved' | 'rejected' | 'signaled' | 'elapsed' | 'timed_out';

/** What a step waits for (docs/runs.md, Waiting for the world). */
export type WaitRequest =
  | { for: 'approval'; prompt: string; timeoutSeconds: number; onTimeout: 'approve' | 'reject' }
  | { for: 'signal'; schema: unknown; timeoutSeconds: number; onTimeout: 'fail' | 'continue' }
  /** `until` (ISO 8601) or `seconds` from when the step first waits. */
  | { for: 'time'; until?: string; seconds?: number };

export type ApprovalRequest = Extract<WaitRequest, { for: 'approval' }>;

/** A person's decision on an approval step, or its timeout's (`timed_out`). */
export interface ApprovalDecision {
  approved: boolean;
  comment: string | null;
  data: Record<string, unknown> | null;
  resolved_at: string;
  timed_out?: boolean;
}

/** A signal as its step received it. */
export interface SignalReceipt {
  data: unknown;
  received_at: string;
}

/**
 * The durable record of a run's steps, kept by the job layer. Paths name steps across embedded runs
 * (`outer/inner`). Absent in contexts that run nothing durable (metrics, tests of the engine alone).
 */
export interface StepJournal {
  /** What an earlier attempt recorded at this path, if anything. */
  recorded(path: string): JournalEntry | undefined;
  /** Records a completed step; resolves once it is durable (never rejects for a run that moved on). */
  complete(
    path: string,
    record: {
      kind: string;
      output: unknown;
      started_at: string;
      ended_at: string;
      credits: number;
      usage?: JournalEntry['usage'];
    },
  ): Promise<void>;
  /**
   * Waits until the wait at `path` is resolved (a decision, a signal, its timer), holding nothing but
   * memory meanwhile (and parking the run when it waits long); `onWaiting` is called once, when it first
   * starts waiting. Answers the resolved entry. Rejects with the signal's reason when the run is stopped.
   */
  waitFor(
    path: string,
    kind: string,
    request: WaitRequest,
    signal: AbortSignal,
    onWaiting: (entry: JournalEntry) => void,
  ): Promise<JournalEntry>;
  /** A step began (+1) or ended (-1) doing something other than waiting: a run parks only when nothing but waits is in flight. */
  busy(delta: 1 | -1): void;
}
