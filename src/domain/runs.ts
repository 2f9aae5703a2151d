/** A run's states, failure codes and the limits its API shapes share; no imports, so the REST bridge and the clients read them without Sequelize. */
export const RUN_STATES = ['PROVISIONED', 'RUNNING', 'COMPLETED', 'EXCEPTION'] as const;
export type RunState = (typeof RUN_STATES)[number];
export const TERMINAL_STATES: readonly RunState[] = ['COMPLETED', 'EXCEPTION'];

/** How far along a state is; a state never moves to a lower rank. */
export function stateRank(state: RunState): number {
  return state === 'PROVISIONED' ? 0 : state === 'RUNNING' ? 1 : 2;
}

export function isTerminal(state: RunState): boolean {
  return TERMINAL_STATES.includes(state);
}

/** Why an EXCEPTION run ended; shown to the run's owner only. */
export const RUN_ERROR_CODES = [
  'StepFailed',
  'InsufficientCredits',
  'Canceled',
  'DeadlineExceeded',
  'WorkerLost',
  'Rejected',
  'ApprovalTimedOut',
  'WaitTimedOut',
  'OutputContractViolation',
  'AgentTurnLimit',
  'BudgetExceeded',
  'Internal',
] as const;
export type RunErrorCode = (typeof RUN_ERROR_CODES)[number];
export interface RunError {
  code: RunErrorCode;
  message: string;
  step_id?: string;
}

/**
 * Fields of a run that are absent, not null, until they exist (the API contract), or that the caller may not
 * see (`error`, `waiting_for`: owner only; `waiting_for` also while nothing waits); `alias` only on
 * runs whose version was drawn from an alias; `replay_of` only on replays; `tags`, `metadata`,
 * `batch_uid` only on runs that have them, for their owner; `priority` for the owner only; `start_at` only on a
 * delayed start not yet begun.
 */
export const RUN_OPTIONAL_FIELDS = [
  'alias',
  'replay_of',
  'tags',
  'metadata',
  'batch_uid',
  'priority',
  'ended_at',
  'result_blob',
  'metrics',
  'error',
  'waiting_for',
  'start_at',
  // What a waiting step has depends on its kind (docs/runs.md, Waiting for the world).
  'waiting_for[].prompt',
  'waiting_for[].schema',
  'waiting_for[].callback_url',
  'waiting_for[].decision_url',
];

/** A run's tag (`tags` of a query, the `tag` filter of the caller's runs): lower-case letters, digits and _ . : -, at most 64. */
export const TAG = /^[a-z0-9][a-z0-9_.:-]{0,63}$/;

/** A query's `priority` (docs/runs.md, Priority): whole numbers from 0 to 9, higher first among one user's waiting runs. */
export const RUN_PRIORITY_MIN = 0;
export const RUN_PRIORITY_MAX = 9;
export const RUN_PRIORITY_DEFAULT = 5;

/** The most runs one bulk action by filter (cancel, replay) acts on; a larger match is cut to its oldest (docs/runs.md). */
export const MAX_BULK_RUNS = 10_000;

/** The furthest ahead a run may be asked to start (`delay_s`, `start_at`): one year of 365 days, in seconds. */
export const MAX_START_DELAY_SECONDS = 31_536_000;

/** An approval's `comment`: at most this many characters (Unicode code points, as the REST edge counts them). */
export const MAX_APPROVAL_COMMENT_CHARS = 2000;
/** An approval's `data`: a JSON object of at most this many bytes serialized. */
export const MAX_APPROVAL_DATA_BYTES = 64 * 1024;
