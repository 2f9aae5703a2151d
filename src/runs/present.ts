import { RUN_COLUMNS, type CircuitRun, type RunApiField } from '../models/CircuitRun';
import { isTerminal, RUN_OPTIONAL_FIELDS, type RunError } from '../domain/runs';
import { omitNulls } from '../omit-nulls';
import type { WaitingStep } from './approvals';
import type { WaitUrlKind } from './wait-urls';

/** Column → the API field it shows as (RUN_COLUMNS' `api`). */
const API_FIELDS = Object.entries(RUN_COLUMNS).flatMap(([column, spec]) =>
  'api' in spec && spec.api ? [[column, spec.api as RunApiField] as const] : [],
);

export interface ShownRunField {
  column: string;
  api: RunApiField;
  value: unknown;
}

/**
 * THE rule of what a viewer sees of a run (docs/runs.md, Who sees a run; Failure details): every API field of RUN_COLUMNS, null when
 * the run's state does not have it yet (`when`) or the viewer may not see it (`ownerOnly`; `mayDebug`
 * is the run policy's `debug`). GraphQL's CircuitRunType and the REST payload below both read it.
 */
export function shownRunFields(run: CircuitRun, mayDebug: boolean): ShownRunField[] {
  return API_FIELDS.map(([column, api]) => {
    const shown = (!api.when || api.when.includes(run.state)) && (!api.ownerOnly || mayDebug);
    return { column, api, value: shown ? ((run.get(column) as unknown) ?? null) : null };
  });
}

/**
 * `start_at`: when a delayed start (docs/runs.md, Delayed start) is due, while the run is PROVISIONED;
 * null for other runs, and once it started. Shown to whoever may read the run.
 */
export function startAtOf(run: CircuitRun): Date | null {
  return run.state === 'PROVISIONED' ? ((run.get('wake_at') as Date | null | undefined) ?? null) : null;
}

/**
 * A run's credits as its owner's and the operator's pages show them (the CLI, /settings → Runs): what it
 * cost, once it ended, and what it holds now. `circuit_runs.credits_held` keeps what the run reserved after
 * it ends (the statement that ends it charges against it; it stays as the record of the reservation), but
 * that statement also released it from the user's balance: an ended run holds nothing.
 */
export function runCredits(run: CircuitRun): { credits_cost: number | null; credits_held: number } {
  const cost = run.get('credits_cost') as string | number | null | undefined;
  return {
    credits_cost: cost === null || cost === undefined ? null : Number(cost),
    credits_held: isTerminal(run.state) ? 0 : Number(run.get('credits_held') ?? 0),
  };
}

const restError = (error: RunError) => ({ code: error.code, message: error.message, step_id: error.step_id ?? null });
const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : value);

/**
 * The run as `GET /api/v1/circuit-runs/{uid}` shows it (snake_case, RUN_COLUMNS' column names), built
 * without GraphQL: what webhooks and the CLI send. `waitingFor`: the steps it waits on (owner only, RUNNING
 * runs), each with its callback or decision URL from `waitUrl` (the run wing's). test/runs.present.test.ts
 * holds it equal to the GET route's answer.
 */
export function presentRunPayload(
  run: CircuitRun,
  view: {
    mayDebug: boolean;
    waitingFor?: readonly WaitingStep[] | null;
    waitUrl?: (runUid: string, path: string, kind: WaitUrlKind) => string;
  },
): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const { column, value } of shownRunFields(run, view.mayDebug)) {
    payload[column] = column === 'error' && value !== null ? restError(value as RunError) : iso(value);
    if (column === 'is_public') payload.document_type = 'circuit_run';
  }
  payload.start_at = iso(startAtOf(run));
  if (view.mayDebug && run.state === 'RUNNING' && view.waitingFor?.length) {
    const url = (step: WaitingStep, kind: WaitUrlKind) =>
      step.kind === kind && view.waitUrl ? view.waitUrl(run.uid, step.step_id, kind) : null;
    // Absent rather than null, as GET shows them: what a step does not have (RUN_OPTIONAL_FIELDS).
    payload.waiting_for = view.waitingFor.map((step) => ({
      step_id: step.step_id,
      kind: step.kind,
      prompt: step.prompt,
      schema: step.schema ?? null,
      expires_at: iso(step.expires_at),
      callback_url: url(step, 'signal'),
      decision_url: url(step, 'approval'),
    }));
  }
  return omitNulls(payload, RUN_OPTIONAL_FIELDS);
}
