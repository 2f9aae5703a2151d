import {
  DEFAULT_INITIAL_BACKOFF_MS,
  DEFAULT_MAX_BACKOFF_MS,
  RETRY_LIMITS,
  STEP_POLICY_DEFAULTS,
  TIMEOUT_LIMITS,
  type PolicyKind,
} from '../step-policy';
import type { FieldSchema } from './types';

/** A string field that is a Handlebars template over `{input, steps}`. */
export function templateField(description: string): FieldSchema {
  return {
    type: 'string',
    description: `${description} A Handlebars template over {input, steps}.`,
    'x-template': true,
    'x-message': 'must be a string template',
  };
}

/** A JSONata expression over `{input, steps}`. */
export function jsonataField(description: string): FieldSchema {
  return {
    type: 'string',
    pattern: '\\S',
    description: `${description} A JSONata expression over {input, steps}.`,
    'x-jsonata': true,
    'x-message': 'must be a non-empty JSONata expression',
  };
}

/** Any JSON value whose string leaves are templates. */
export function templateLeavesField(description: string): FieldSchema {
  return {
    description: `${description} Any JSON; every string inside is a Handlebars template over {input, steps}.`,
    'x-template-leaves': true,
  };
}

const range = (limits: { min: number; max: number }) => `an integer from ${limits.min} to ${limits.max}`;

/**
 * `retry` and `timeout_ms` for a kind that calls out (`http`, `llm`, `circuit`), with
 * that kind's defaults in the words; step-policy reads them.
 */
export function stepPolicyFields(kind: PolicyKind): Record<'retry' | 'timeout_ms', FieldSchema> {
  const defaults = STEP_POLICY_DEFAULTS[kind];
  const integer = (limits: { min: number; max: number }, description: string): FieldSchema => ({
    type: 'integer',
    minimum: limits.min,
    maximum: limits.max,
    description,
    'x-message': `must be ${range(limits)}`,
  });
  return {
    retry: {
      type: 'object',
      additionalProperties: false,
      description:
        'How often the step is attempted. Retried on connection errors, timeouts and HTTP 408, 425, 429, 500, 502, 503, 504, after an exponential back-off with jitter; a Retry-After within max_backoff_ms is honoured, a longer one fails the step at once.',
      'x-message': 'must be an object with max_attempts, initial_backoff_ms, max_backoff_ms',
      properties: {
        max_attempts: integer(
          RETRY_LIMITS.maxAttempts,
          `Attempts in all, the first included (default ${defaults.maxAttempts}).`,
        ),
        initial_backoff_ms: integer(
          RETRY_LIMITS.initialBackoffMs,
          `The wait after the first failed attempt, doubled after each further one (default ${DEFAULT_INITIAL_BACKOFF_MS}).`,
        ),
        max_backoff_ms: integer(
          RETRY_LIMITS.maxBackoffMs,
          `The longest wait between attempts (default ${DEFAULT_MAX_BACKOFF_MS}).`,
        ),
      },
    },
    timeout_ms: integer(
      TIMEOUT_LIMITS,
      defaults.timeoutMs === undefined
        ? "How long one attempt may take, in ms (default: bounded only by the run's deadline)."
        : `How long one attempt may take, in ms (default ${defaults.timeoutMs}).`,
    ),
  };
}

/** `cache.ttl_s` bounds: one second to 30 days. */
export const CACHE_TTL_LIMITS = { min: 1, max: 2_592_000 };
export const CACHE_SCOPES = ['caller', 'circuit'] as const;
export type CacheScope = (typeof CACHE_SCOPES)[number];

/**
 * `cache` (docs/runs.md, Step cache), a field every step kind accepts (definition-schema.ts adds it to all of them
 * beside id and kind). The step cache itself is src/runs/step-cache.ts.
 */
export function cacheField(): FieldSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['ttl_s'],
    description:
      'Reuse this step\'s output for ttl_s seconds when the same request comes again: the key is the step\'s kind and fields after templates are rendered (model and messages, url, headers and body, …; for template and transform the text and the whole {input, steps} it reads), plus the caller (scope "caller", the default) or the circuit (scope "circuit": results are shared between everyone who runs this circuit). A hit calls no upstream, costs 0 credits and is marked "cached": true. Failed steps are never cached. Approval steps ignore it.',
    'x-message': 'must be an object with ttl_s and optional scope',
    properties: {
      ttl_s: {
        type: 'integer',
        minimum: CACHE_TTL_LIMITS.min,
        maximum: CACHE_TTL_LIMITS.max,
        description: 'How long a result is reused, in seconds.',
        'x-message': `must be ${range(CACHE_TTL_LIMITS)}`,
      },
      scope: {
        enum: [...CACHE_SCOPES],
        description: "Whose requests share results: the caller's own (default) or every caller of this circuit.",
        'x-message': `must be one of ${CACHE_SCOPES.join(', ')}`,
      },
    },
  };
}
