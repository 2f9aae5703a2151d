/**
 * Step policies (docs/runs.md, Step policies: retry and timeout): how often an `http`, `llm` or `circuit` step is attempted, how long it
 * waits between attempts, and how long one attempt may take. One place for the limits, the defaults
 * per kind, and the runner every such step goes through.
 */

import type { StepDefinition } from '../domain/definition';
import { StepError, type StepContext } from './steps/types';

export const RETRY_LIMITS = {
  maxAttempts: { min: 1, max: 10 },
  initialBackoffMs: { min: 100, max: 60_000 },
  maxBackoffMs: { min: 100, max: 600_000 },
} as const;
export const TIMEOUT_LIMITS = { min: 100, max: 600_000 } as const;
export const DEFAULT_INITIAL_BACKOFF_MS = 1_000;
export const DEFAULT_MAX_BACKOFF_MS = 30_000;

/** Statuses an upstream answers when asking again later may help. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 425, 429, 500, 502, 503, 504]);

export type PolicyKind = 'http' | 'llm' | 'circuit';

/** Defaults per kind: attempts, and the per-attempt timeout (none for `circuit`: the run's deadline bounds it). */
export const STEP_POLICY_DEFAULTS: Record<PolicyKind, { maxAttempts: number; timeoutMs?: number }> = {
  http: { maxAttempts: 1, timeoutMs: 30_000 },
  llm: { maxAttempts: 3, timeoutMs: 120_000 },
  circuit: { maxAttempts: 1 },
};

export interface StepPolicy {
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** Per attempt; undefined: no own timeout (the run's signal still bounds it). */
  timeoutMs?: number;
  /** Whether the step set `retry` or `timeout_ms` itself (explain mentions only what was set). */
  explicit: { retry: boolean; timeout: boolean };
}

function integerIn(value: unknown, limits: { min: number; max: number }): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= limits.min && value <= limits.max;
}

/**
 * The policy of a step: its `retry` and `timeout_ms` over the defaults of its kind. Publishing has
 * checked both against the field schemas; a value out of range here (a definition that never went
 * through publishing) fails the step rather than being bent into range.
 */
export function parseStepPolicy(step: StepDefinition, kind: PolicyKind): StepPolicy {
  const defaults = STEP_POLICY_DEFAULTS[kind];
  const policy: StepPolicy = {
    maxAttempts: defaults.maxAttempts,
    initialBackoffMs: DEFAULT_INITIAL_BACKOFF_MS,
    maxBackoffMs: DEFAULT_MAX_BACKOFF_MS,
    timeoutMs: defaults.timeoutMs,
    explicit: { retry: step.retry !== undefined, timeout: step.timeout_ms !== undefined },
  };
  if (step.retry !== undefined) {
    if (typeof step.retry !== 'object' || step.retry === null || Array.isArray(step.retry))
      throw new StepError(step.id, 'retry must be an object');
    const retry = step.retry as Record<string, unknown>;
    const read = (field: string, limits: { min: number; max: number }, fallback: number): number => {
      if (retry[field] === undefined) return fallback;
      if (!integerIn(retry[field], limits))
        throw new StepError(step.id, `retry.${field} must be an integer from ${limits.min} to ${limits.max}`);
      return retry[field];
    };
    policy.maxAttempts = read('max_attempts', RETRY_LIMITS.maxAttempts, policy.maxAttempts);
    policy.initialBackoffMs = read('initial_backoff_ms', RETRY_LIMITS.initialBackoffMs, policy.initialBackoffMs);
    policy.maxBackoffMs = read('max_backoff_ms', RETRY_LIMITS.maxBackoffMs, policy.maxBackoffMs);
  }
  if (step.timeout_ms !== undefined) {
    if (!integerIn(step.timeout_ms, TIMEOUT_LIMITS))
      throw new StepError(step.id, `timeout_ms must be an integer from ${TIMEOUT_LIMITS.min} to ${TIMEOUT_LIMITS.max}`);
    policy.timeoutMs = step.timeout_ms;
  }
  return policy;
}

const POLICY_KINDS: readonly string[] = Object.keys(STEP_POLICY_DEFAULTS);

/**
 * The policy a step sets, in words for explain ("Retried up to 3 attempts; each attempt times out
 * after 5 s."); empty when the step sets neither `retry` nor `timeout_ms` (or they are invalid).
 */
export function describePolicy(step: StepDefinition): string {
  if (!POLICY_KINDS.includes(step.kind) || (step.retry === undefined && step.timeout_ms === undefined)) return '';
  let policy: StepPolicy;
  try {
    policy = parseStepPolicy(step, step.kind as PolicyKind);
  } catch {
    return '';
  }
  const parts: string[] = [];
  if (policy.explicit.retry)
    parts.push(policy.maxAttempts > 1 ? `retried up to ${policy.maxAttempts} attempts` : 'not retried');
  if (policy.explicit.timeout) parts.push(`each attempt times out after ${formatDuration(policy.timeoutMs!)}`);
  const text = parts.join('; ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/**
 * A failed attempt, as an attempt function reports it: `retryable` when asking again may help
 * (a connection error, a timeout, a RETRYABLE_STATUSES answer), `retryAfterMs` when the upstream
 * said when (Retry-After), `summary` the short words for "…and asked to retry after" (e.g.
 * "upstream answered 429"; the message by default).
 */
export class AttemptError extends StepError {
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  readonly summary: string;

  constructor(
    stepId: string,
    message: string,
    options: { retryable: boolean; retryAfterMs?: number; summary?: string; code?: StepError['code']; spent?: number },
  ) {
    super(stepId, message, options.code ?? 'StepFailed', options.spent ?? 0);
    this.name = 'AttemptError';
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
    this.summary = options.summary ?? message;
  }
}

/** Thrown as the abort reason of an attempt's signal when its timeout passes. */
export class AttemptTimedOut extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the attempt timed out after ${formatDuration(timeoutMs)}`);
    this.name = 'AttemptTimedOut';
  }
}

/** `200 ms`, `5 s`, `1.5 s`, `2 min`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 100) / 10} s`;
}

/**
 * A `Retry-After` header value in ms from `now`: delta seconds, or an HTTP date (a date in the past is
 * 0). Undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined || value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** What an attempt function gets: its number (1-based) and a signal that fires on the run's end or this attempt's timeout. */
export interface Attempt {
  number: number;
  signal: AbortSignal;
  /** Whether this attempt's own timeout fired (not the run's signal). */
  timedOut(): boolean;
  timeoutMs?: number;
}

/** The time seam of the runner (tests inject their own). */
export interface PolicyClock {
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts; must not keep the process alive by itself. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** In [0, 1): the jitter. */
  random(): number;
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener('abort', done, { once: true });
  });
}

export const systemClock: PolicyClock = { now: () => Date.now(), sleep, random: () => Math.random() };

/**
 * The wait after failed attempt `attempt` (1-based): exponential, `initial * 2^(attempt-1)` capped by
 * `max_backoff_ms`, with equal jitter (half fixed, half random) so retries of many runs spread out.
 */
export function backoffMs(
  policy: Pick<StepPolicy, 'initialBackoffMs' | 'maxBackoffMs'>,
  attempt: number,
  random: () => number = Math.random,
): number {
  const cap = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(cap / 2 + random() * (cap / 2));
}

export interface PolicyRunOptions {
  /** When the step started (its `started` event); the `retrying` events carry it. Default: ctx.stepStartedAt, else now. */
  startedAt?: string;
  clock?: Partial<PolicyClock>;
}

/**
 * Runs `attempt` under `policy`: each attempt gets a signal combining ctx.signal and the per-attempt
 * timeout. A failure that is an AttemptError with `retryable` is tried again while attempts remain,
 * after a back-off (or the upstream's Retry-After when it is within max_backoff_ms; beyond it the
 * step fails at once saying so); before each back-off a `retrying` step event goes to ctx.observer.
 * The back-off ends at once when ctx.signal aborts. Any other failure, or the last, is thrown as is
 * (with "(after N attempts)" when there were several); a final retryable failure is recorded in
 * ctx.retryableFailures (how an embedding `circuit` step knows whether retrying may help).
 */
export async function withStepPolicy<T>(
  step: StepDefinition,
  ctx: Pick<StepContext, 'signal' | 'observer' | 'stepStartedAt' | 'retryableFailures'>,
  policy: Pick<StepPolicy, 'maxAttempts' | 'initialBackoffMs' | 'maxBackoffMs' | 'timeoutMs'>,
  attempt: (attempt: Attempt) => Promise<T>,
  options: PolicyRunOptions = {},
): Promise<T> {
  const clock: PolicyClock = { ...systemClock, ...options.clock };
  const startedAt = options.startedAt ?? ctx.stepStartedAt ?? new Date(clock.now()).toISOString();
  const giveUp = (error: unknown, retryable: boolean): never => {
    if (retryable) ctx.retryableFailures?.add(step.id);
    throw error;
  };
  for (let number = 1; ; number++) {
    const timeout = new AbortController();
    const timer =
      policy.timeoutMs === undefined
        ? undefined
        : setTimeout(() => timeout.abort(new AttemptTimedOut(policy.timeoutMs!)), policy.timeoutMs);
    timer?.unref();
    const signal = timer === undefined ? ctx.signal : AbortSignal.any([ctx.signal, timeout.signal]);
    let failure: unknown;
    try {
      return await attempt({
        number,
        signal,
        timedOut: () => timeout.signal.aborted && !ctx.signal.aborted,
        timeoutMs: policy.timeoutMs,
      });
    } catch (error) {
      failure = error;
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
    if (ctx.signal.aborted || !(failure instanceof AttemptError)) throw failure;
    if (!failure.retryable) return giveUp(failure, false);
    if (number >= policy.maxAttempts) {
      return giveUp(
        number > 1 ? new AttemptError(step.id, `${failure.message} (after ${number} attempts)`, failure) : failure,
        true,
      );
    }
    let wait: number;
    if (failure.retryAfterMs !== undefined) {
      if (failure.retryAfterMs > policy.maxBackoffMs) {
        const seconds = Math.ceil(failure.retryAfterMs / 1000);
        return giveUp(
          new AttemptError(
            step.id,
            `${failure.summary} and asked to retry after ${seconds} s, beyond max_backoff_ms ${policy.maxBackoffMs}`,
            { ...failure, retryable: false },
          ),
          false,
        );
      }
      wait = failure.retryAfterMs;
    } else {
      wait = backoffMs(policy, number, clock.random);
    }
    ctx.observer?.step({
      step_id: step.id,
      kind: step.kind,
      status: 'retrying',
      started_at: startedAt,
      attempt: number,
      error: failure.message,
      retry_at: new Date(clock.now() + wait).toISOString(),
    });
    await clock.sleep(wait, ctx.signal);
    if (ctx.signal.aborted) throw new StepError(step.id, 'stopped while waiting to retry: the run ended');
  }
}
