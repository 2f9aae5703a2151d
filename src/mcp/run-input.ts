import type { ElicitRequestFormParams } from '@modelcontextprotocol/server';
import { AppError } from '../errors';
import { isUid } from '../ids';
import type { User } from '../models';
import { CircuitRun } from '../models/CircuitRun';
import { runPermits } from '../policies/run.policy';
import type { WaitingStep } from '../runs';
import type { ApiServices } from '../graphql/context';

/**
 * A run that waits on a signal or an approval asks its MCP client (protocol 2026-07-28) for the answer:
 * each such waiting step is one form elicitation (an `input_required` result's `inputRequests`, or an
 * `input_required` task's), keyed `signal:<step id>` or `approval:<step id>`; the client's answer is
 * delivered as the owner's signal or decision, exactly as REST's would be.
 */

type JsonObject = Record<string, unknown>;
const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The wire shape of one embedded request (`inputRequests` value). */
export interface ElicitationRequest {
  method: 'elicitation/create';
  params: ElicitRequestFormParams;
}

export type InputRequests = Record<string, ElicitationRequest>;

/** What applying a round of answers did, beyond delivering them. */
export interface AnswerOutcome {
  /** Steps whose answer was refused (`cancel`, a declined signal, or data the step's schema rejects): still waiting. */
  unanswered: { key: string; reason: string }[];
}

const PRIMITIVE = new Set(['string', 'number', 'integer', 'boolean']);
const SIGNAL_TEXT = 'data';

/** A signal's own schema, when an elicitation form can show it as is: an object of primitive fields. */
function formSchema(schema: unknown): ElicitRequestFormParams['requestedSchema'] | undefined {
  if (!isObject(schema) || schema.type !== 'object' || !isObject(schema.properties)) return undefined;
  const properties = Object.entries(schema.properties);
  if (properties.length === 0) return undefined;
  if (!properties.every(([, field]) => isObject(field) && typeof field.type === 'string' && PRIMITIVE.has(field.type)))
    return undefined;
  const required = Array.isArray(schema.required) ? schema.required.filter((n) => typeof n === 'string') : undefined;
  return {
    type: 'object',
    properties: schema.properties as ElicitRequestFormParams['requestedSchema']['properties'],
    ...(required?.length ? { required } : {}),
  };
}

const keyOf = (step: Pick<WaitingStep, 'kind' | 'step_id'>) => `${step.kind}:${step.step_id}`;

/** The waiting steps a client can answer: approvals and signals (a timed wait needs no one). */
export function answerable(steps: readonly WaitingStep[]): WaitingStep[] {
  return steps.filter((step) => step.kind === 'approval' || step.kind === 'signal');
}

/** The elicitation that asks for one waiting step's answer. */
export function inputRequestFor(step: WaitingStep): ElicitationRequest {
  const until = step.expires_at ? ` (until ${new Date(step.expires_at).toISOString()})` : '';
  if (step.kind === 'approval') {
    return {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: `${step.prompt ?? `Approve step ${step.step_id}?`}${until}`,
        requestedSchema: {
          type: 'object',
          properties: {
            approved: { type: 'boolean', title: 'Approve', description: 'true approves, false rejects' },
            comment: { type: 'string', title: 'Comment', maxLength: 2000 },
          },
          required: ['approved'],
        },
      },
    };
  }
  const own = formSchema(step.schema);
  return {
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message: `Step ${step.step_id} waits for a signal${until}${own ? '' : ': its data as JSON'}`,
      requestedSchema: own ?? {
        type: 'object',
        properties: { [SIGNAL_TEXT]: { type: 'string', title: 'Signal (JSON)' } },
        required: [SIGNAL_TEXT],
      },
    },
  };
}

export function inputRequestsFor(steps: readonly WaitingStep[]): InputRequests {
  return Object.fromEntries(answerable(steps).map((step) => [keyOf(step), inputRequestFor(step)]));
}

/** The caller's own run that the caller may answer (the owner's `approve` rule); null for anything else. */
export async function answerableRun(viewer: User, runUid: unknown): Promise<CircuitRun | null> {
  if (typeof runUid !== 'string' || !isUid(runUid)) return null;
  const run = await CircuitRun.findByPk(runUid);
  return run && run.user_uid === viewer.uid && runPermits(viewer, run, 'approve') ? run : null;
}

function signalData(step: WaitingStep, content: JsonObject): unknown {
  if (formSchema(step.schema)) return content;
  const text = content[SIGNAL_TEXT];
  if (typeof text !== 'string') return text ?? null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Delivers a round of answers (elicitation results keyed as asked) to the run's steps that still wait;
 * keys of steps that do not wait any more are ignored. `accept` signals or decides; `decline` rejects an
 * approval; anything else leaves the step waiting.
 */
export async function deliverAnswers(
  services: ApiServices,
  runUid: string,
  answers: Record<string, unknown> | undefined,
): Promise<AnswerOutcome> {
  const outcome: AnswerOutcome = { unanswered: [] };
  if (!answers || Object.keys(answers).length === 0) return outcome;
  const [waiting] = await services.runs.waitingSteps([runUid]);
  for (const step of answerable(waiting ?? [])) {
    const key = keyOf(step);
    const answer = answers[key];
    if (!isObject(answer)) continue;
    const content = isObject(answer.content) ? answer.content : {};
    try {
      if (step.kind === 'approval' && (answer.action === 'accept' || answer.action === 'decline')) {
        const approved = answer.action === 'accept' && content.approved === true;
        const comment = typeof content.comment === 'string' && content.comment !== '' ? content.comment : null;
        await services.runs.approve(runUid, step.step_id, { approved, comment, data: null });
      } else if (step.kind === 'signal' && answer.action === 'accept') {
        await services.runs.signal(runUid, step.step_id, signalData(step, content));
      } else {
        outcome.unanswered.push({ key, reason: `the answer to ${key} was ${String(answer.action)}` });
      }
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // Conflict: decided meanwhile by someone else; BadClientData: the step keeps waiting.
      if (error.code !== 'Conflict') outcome.unanswered.push({ key, reason: `${error.code}: ${error.message}` });
    }
  }
  return outcome;
}
