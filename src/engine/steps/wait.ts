import { renderTemplate, templateFailure } from '../render';
import { templateField } from './field-schemas';
import { defineStepKind, sandboxCall, StepError, templateScope, type StepContext } from './types';
import type { JournalEntry, SignalReceipt, WaitRequest } from '../run-control';
import type { StepDefinition } from '../../domain/definition';

/** The longest a wait may last: a year (365 days). */
export const WAIT_MAX_SECONDS = 31_536_000;
export const SIGNAL_DEFAULT_TIMEOUT_S = 86_400;
export const WAIT_FOR = ['time', 'signal'] as const;
export const SIGNAL_ON_TIMEOUT = ['fail', 'continue'] as const;

const seconds = (description: string) => ({
  type: 'integer',
  minimum: 1,
  maximum: WAIT_MAX_SECONDS,
  description,
  'x-message': `must be a whole number of seconds from 1 to ${WAIT_MAX_SECONDS}`,
});

/**
 * Publish-time rules the field schemas cannot say: which fields go with which `for`. Null when the step is
 * well formed, else the sentence after "step <id>".
 */
export function waitStepProblem(step: StepDefinition): { field: string; message: string } | null {
  const has = (field: string) => step[field] !== undefined;
  if (step.for === 'time') {
    for (const field of ['schema', 'timeout_s', 'on_timeout'])
      if (has(field)) return { field, message: 'belongs to a wait for a signal, not for time' };
    if (has('duration_s') === has('until'))
      return { field: 'duration_s', message: 'a wait for time needs exactly one of duration_s and until' };
    // A literal instant is checked now; a template is checked when the step renders it.
    if (typeof step.until === 'string' && !step.until.includes('{{')) {
      const at = /^\d{4}-\d{2}-\d{2}T/.test(step.until) ? Date.parse(step.until) : NaN;
      if (Number.isNaN(at))
        return { field: 'until', message: 'must be an ISO 8601 instant (or a template rendering one)' };
      if (at > Date.now() + WAIT_MAX_SECONDS * 1000) return { field: 'until', message: 'is more than a year ahead' };
    }
    return null;
  }
  for (const field of ['duration_s', 'until'])
    if (has(field)) return { field, message: 'belongs to a wait for time, not for a signal' };
  return null;
}

/** An ISO 8601 instant at most a year ahead; one in the past is allowed (it does not wait). */
function untilOf(step: StepDefinition, rendered: string): string {
  const text = rendered.trim();
  const at = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(at))
    throw new StepError(step.id, `until must be an ISO 8601 instant, not ${JSON.stringify(text.slice(0, 60))}`);
  if (at > Date.now() + WAIT_MAX_SECONDS * 1000) throw new StepError(step.id, 'until is more than a year ahead');
  return new Date(at).toISOString();
}

async function requestOf(step: StepDefinition, ctx: StepContext): Promise<WaitRequest> {
  if (step.for === 'time') {
    if (typeof step.duration_s === 'number') return { for: 'time', seconds: step.duration_s };
    let rendered: string;
    try {
      rendered = await renderTemplate(String(step.until), templateScope(ctx), sandboxCall(ctx));
    } catch (error) {
      throw new StepError(step.id, `until: ${templateFailure(error)}`);
    }
    return { for: 'time', until: untilOf(step, rendered) };
  }
  return {
    for: 'signal',
    schema: step.schema ?? null,
    timeoutSeconds: typeof step.timeout_s === 'number' ? step.timeout_s : SIGNAL_DEFAULT_TIMEOUT_S,
    onTimeout: step.on_timeout === 'continue' ? 'continue' : 'fail',
  };
}

const secondsBetween = (from: string, to: string | undefined) =>
  to ? Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000)) : 0;

/**
 * `wait` (docs/runs.md, Waiting for the world): a durable sleep (`for: time`, `duration_s` or `until`) or a
 * wait for one signal (`for: signal`), sent to the step's callback URL or by the run's owner. Waiting holds
 * no slot, does not count towards the deadline, and past RUN_PARK_AFTER_S holds no memory (the run parks).
 * Output: `{waited_s}` for time; the signal's data, or null after a timeout with `on_timeout: continue`
 * (`fail`: the run ends WaitTimedOut). Costs nothing.
 */
export const waitStep = defineStepKind({
  kind: 'wait',
  summary:
    'Waits for a time (duration_s or until) or for a signal POSTed to its callback URL ({{waits.<id>.callback_url}}); the output is {waited_s} or the signal. Costs 0 credits.',
  fields: {
    for: {
      enum: [...WAIT_FOR],
      description: 'time: a durable sleep; signal: waits for one JSON body sent to the callback URL or by the owner.',
      'x-message': `must be one of ${WAIT_FOR.join(', ')}`,
    },
    duration_s: seconds('for time: how long to wait, in seconds.'),
    until: templateField('for time: an ISO 8601 instant at most a year ahead (one already past does not wait).'),
    schema: {
      type: 'object',
      description: "for signal: a JSON Schema the signal's body must match (else 400, and the step keeps waiting).",
      'x-message': 'must be a JSON Schema object',
    },
    timeout_s: seconds(`for signal: how long to wait for it (default ${SIGNAL_DEFAULT_TIMEOUT_S}).`),
    on_timeout: {
      enum: [...SIGNAL_ON_TIMEOUT],
      description: 'for signal: fail (default) ends the run WaitTimedOut; continue goes on with null as the output.',
      'x-message': `must be one of ${SIGNAL_ON_TIMEOUT.join(', ')}`,
    },
  },
  required: ['for'],
  async execute(step, ctx) {
    if (!ctx.journal) throw new StepError(step.id, 'wait steps cannot wait here', 'Internal');
    const path = `${ctx.path ?? ''}${step.id}`;
    const request = await requestOf(step, ctx);
    const resolved: JournalEntry = await ctx.journal.waitFor(path, 'wait', request, ctx.signal, (entry) => {
      ctx.observer?.step({
        step_id: step.id,
        kind: 'wait',
        status: 'waiting',
        for: request.for,
        started_at: entry.started_at,
        expires_at: entry.expires_at,
      });
    });
    if (request.for === 'time')
      return { output: { waited_s: secondsBetween(resolved.started_at, resolved.expires_at) }, credits: 0 };
    if (resolved.status === 'signaled')
      return { output: (resolved.decision as SignalReceipt).data ?? null, credits: 0 };
    if (request.onTimeout === 'continue') return { output: null, credits: 0 };
    throw new StepError(step.id, `no signal came within ${request.timeoutSeconds} s`, 'WaitTimedOut');
  },
  describe: (step, say) =>
    step.for === 'time'
      ? typeof step.duration_s === 'number'
        ? `Waits ${step.duration_s} s`
        : `Waits until ${say.quote(String(step.until))}`
      : 'Waits for a signal sent to its callback URL',
});
