import { RUN_COLUMNS, type CircuitRun, type RunApiField, type RunError } from '../models/CircuitRun';
import type { WaitingStep } from './approvals';

/** Column → the API field it shows as (RUN_COLUMNS' `api`). */
const API_FIELDS = Object.entries(RUN_COLUMNS).flatMap(([column, spec]) => ('api' in spec && spec.api ? [[column, spec.api as RunApiField] as const] : []));

export interface ShownRunField { column: string; api: RunApiField; value: unknown }

/**
 * THE rule of what a viewer sees of a run (DESIGN §2, §7.1): every API field of RUN_COLUMNS, null when
 * the run's state does not have it yet (`when`) or the viewer may not see it (`ownerOnly`; `mayDebug`
 * is the run policy's `debug`). GraphQL's CircuitRunType and the REST payload below both read it.
 */
export function shownRunFields(run: CircuitRun, mayDebug: boolean): ShownRunField[] {
  return API_FIELDS.map(([column, api]) => {
    const shown = (!api.when || api.when.includes(run.state)) && (!api.ownerOnly || mayDebug);
    return { column, api, value: shown ? (run.get(column) as unknown) ?? null : null };
  });
}

/**
 * Fields of a run that are absent, not null, until they exist (spec 2.1), or that the caller may not
 * see (`error`, `waiting_for`: owner only; `waiting_for` also while nothing waits, DESIGN §9.4); `alias`
 * only on runs whose version was drawn from one (DESIGN §10.1); `replay_of` only on replays (§10.2);
 * `tags`, `metadata`, `batch_uid` only on runs that have them, for their owner (§12).
 */
export const RUN_OPTIONAL_FIELDS = ['alias', 'replay_of', 'tags', 'metadata', 'batch_uid', 'ended_at', 'result_blob', 'metrics', 'error', 'waiting_for'];
const OPTIONAL = new Set(RUN_OPTIONAL_FIELDS);

const restError = (error: RunError) => ({ code: error.code, message: error.message, step_id: error.step_id ?? null });
const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : value);

/**
 * The run as `GET /api/v1/circuit-runs/{uid}` shows it (snake_case, RUN_COLUMNS' column names), built
 * without GraphQL: what webhooks and the CLI send. `waitingFor`: the approvals it waits on (owner
 * only, RUNNING runs). test/runs.present.test.ts holds it equal to the GET route's answer.
 */
export function presentRunPayload(run: CircuitRun, view: { mayDebug: boolean; waitingFor?: readonly WaitingStep[] | null }): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const { column, value } of shownRunFields(run, view.mayDebug)) {
    if (value === null && OPTIONAL.has(column)) continue;
    payload[column] = column === 'error' && value !== null ? restError(value as RunError) : iso(value);
    if (column === 'is_public') payload.document_type = 'circuit_run';
  }
  if (view.mayDebug && run.state === 'RUNNING' && view.waitingFor?.length) {
    payload.waiting_for = view.waitingFor.map((step) => ({ step_id: step.step_id, prompt: step.prompt, expires_at: iso(step.expires_at) }));
  }
  return payload;
}
