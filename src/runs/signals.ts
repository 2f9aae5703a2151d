import { preparedQuery } from '../db/prepared';
import type { RunDeps } from './ports';
import type { RunState } from '../domain/runs';
import { badInput, conflict, notFound } from '../errors';
import { describeInputError } from '../engine/input-schema';
import { textFlaw } from '../input-hygiene';
import { wakeHeard, wakeInStatement, type WakeOutcome } from './wake';
import type { SqlEnqueue } from '../queue/agenda';

/**
 * Signals (docs/runs.md, Signals and callback URLs): the one way a `wait` step for a signal gets its data,
 * whoever sends it (a callback URL, the run's owner, MCP). The step's row holds the signal; a signal that
 * comes before its step waits is kept in a row of its own and consumed when the step starts waiting.
 */

/** Who sends: the owner (409 for a step that is not a signal wait) or a callback URL whose key was verified (the step is one). */
export type SignalSender = 'owner' | 'callback';

export interface SignalOutcome {
  /** True when this very data had been received before: nothing changed. */
  repeated: boolean;
}

interface SignalTarget {
  state: RunState;
  circuit_version_uid: string;
  kind: string | null;
  wait_for: string | null;
  status: string | null;
  schema: unknown;
  same: boolean | null;
  expired: boolean | null;
  defined: { kind?: unknown; for?: unknown; schema?: unknown } | null;
}

/** The run, the step's row if any, and (before the step waits) the step as the run's definition declares it. */
const TARGET = `
SELECT r.state, r.circuit_version_uid, s.kind, s.wait_for, s.status, s.schema,
       s.decision -> 'data' = $3::jsonb AS same, s.expires_at <= now() AS expired,
       CASE WHEN s.run_uid IS NULL THEN
         (SELECT step FROM jsonb_array_elements(v.definition -> 'steps') step WHERE step ->> 'id' = $2 LIMIT 1) END AS defined
  FROM circuit_runs r
  LEFT JOIN circuit_run_steps s ON s.run_uid = r.uid AND s.path = $2
  LEFT JOIN circuit_versions v ON v.uid = r.circuit_version_uid
 WHERE r.uid = $1`;

/**
 * Records the signal while the step waits (or before it waits), and the run is PROVISIONED or RUNNING,
 * and wakes the run (wakeInStatement): the run row is locked first (its lock orders this against an end or
 * a park), then the step's row is written. A parked PROVISIONED run is a delayed start: it is not woken,
 * its signal waits for it.
 */
function recordSql(sqlEnqueue: SqlEnqueue | undefined): string {
  const wake = wakeInStatement(sqlEnqueue);
  return `
WITH target AS (
  SELECT uid, attempt, state = 'RUNNING' AND parked_at IS NOT NULL AS parked
    FROM circuit_runs WHERE uid = $1 AND state IN ('PROVISIONED', 'RUNNING') FOR NO KEY UPDATE
), resolved AS (
  INSERT INTO circuit_run_steps (run_uid, path, kind, status, attempt, wait_for, decision, started_at)
  SELECT target.uid, $2, 'wait', 'signaled', target.attempt, 'signal',
         jsonb_build_object('data', $3::jsonb, 'received_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')), now()
    FROM target
  ON CONFLICT (run_uid, path) DO UPDATE SET status = 'signaled', decision = EXCLUDED.decision
   WHERE circuit_run_steps.status = 'waiting' AND circuit_run_steps.kind = 'wait' AND circuit_run_steps.wait_for = 'signal'
     AND (circuit_run_steps.expires_at IS NULL OR circuit_run_steps.expires_at > now())
  RETURNING run_uid
), ${wake.ctes}
SELECT (SELECT count(*) FROM resolved)::int AS recorded, ${wake.columns}`;
}

const quoted = (stepId: string) => JSON.stringify(stepId.length > 100 ? `${stepId.slice(0, 100)}…` : stepId);

/**
 * Sends `data` to the signal wait `path` of run `runUid`; the caller has checked who may (the owner's
 * policy, or a callback URL's key). 409 Conflict: the step is not a signal wait (owner), already has
 * another signal, no longer waits (timed out), or the run has ended; 400: the data fails the step's schema
 * (it keeps waiting); 404: no such run.
 */
export async function deliverSignal(
  deps: RunDeps,
  runUid: string,
  path: string,
  data: unknown,
  sender: SignalSender,
  versionUid?: string,
): Promise<SignalOutcome> {
  const step = `Step ${quoted(path)}`;
  if (textFlaw(path)) throw conflict(`${step} is not a signal wait of this run`);
  const json = JSON.stringify(data ?? null);
  if (versionUid && (await recordedAtOnce(deps, runUid, versionUid, path, data, json))) return { repeated: false };
  for (let attempt = 1; ; attempt++) {
    const [target] = await preparedQuery<SignalTarget>(deps.sequelize, TARGET, [runUid, path, json]);
    if (!target) throw notFound('Circuit run');
    const declared = target.defined;
    const isSignal = target.kind
      ? target.kind === 'wait' && target.wait_for === 'signal'
      : declared
        ? declared.kind === 'wait' && declared.for === 'signal'
        : sender === 'callback';
    if (!isSignal) throw conflict(`${step} is not a signal wait of this run`);
    if (target.state !== 'RUNNING' && target.state !== 'PROVISIONED')
      throw conflict(`The run is ${target.state}: ${step.toLowerCase()} can no longer be signaled`);
    if (target.status === 'signaled') {
      if (target.same) return { repeated: true };
      throw conflict(`${step} already has its signal; a different one cannot be recorded`);
    }
    if (target.status !== null && (target.status !== 'waiting' || target.expired))
      throw conflict(`${step} no longer waits for a signal`);
    const schema = target.kind ? target.schema : declared?.schema;
    if (schema) checkAgainst(deps, `${target.circuit_version_uid}#signal#${path}`, schema, data);
    const [written] = await preparedQuery<WakeOutcome & { recorded: number }>(
      deps.sequelize,
      recordSql(deps.queue.sqlEnqueue),
      [runUid, path, json],
    );
    if (written?.recorded) {
      await wakeHeard(deps, runUid, written);
      return { repeated: false };
    }
    // The step or run changed between the two statements (it began waiting, or ended): looked at once more.
    if (attempt >= 2) throw conflict(`${step} could not be signaled; try again`);
  }
}

/**
 * The common case in one statement: a caller that has read the run (the owner's request, for its policy)
 * knows its version, whose definition declares the step. Data that the declared step's schema accepts is
 * recorded and the run woken at once; false — nothing recorded (the step has its signal, no longer waits,
 * the run ended) or the data fails the schema — leaves the answer to the full path, which reads the step
 * and says why.
 */
async function recordedAtOnce(
  deps: RunDeps,
  runUid: string,
  versionUid: string,
  path: string,
  data: unknown,
  json: string,
): Promise<boolean> {
  const version = await deps.runService.versions.fetch(versionUid);
  const declared = version?.definition.steps.find((candidate) => candidate.id === path);
  if (!declared || declared.kind !== 'wait' || declared.for !== 'signal') return false;
  if (declared.schema) {
    try {
      if (!deps.schemas.outputs.validatorFor(`${versionUid}#signal#${path}`, declared.schema)(data)) return false;
    } catch {
      return false;
    }
  }
  const [written] = await preparedQuery<WakeOutcome & { recorded: number }>(
    deps.sequelize,
    recordSql(deps.queue.sqlEnqueue),
    [runUid, path, json],
  );
  if (!written?.recorded) return false;
  await wakeHeard(deps, runUid, written);
  return true;
}

function checkAgainst(deps: RunDeps, key: string, schema: unknown, data: unknown): void {
  let validate;
  try {
    validate = deps.schemas.outputs.validatorFor(key, schema);
  } catch (error) {
    throw badInput(`the step's schema cannot be used: ${(error as Error).message}`, { field: 'data' });
  }
  if (validate(data)) return;
  const first = validate.errors?.[0];
  const problem = first
    ? describeInputError(first, 'data')
    : { field: 'data', message: 'data does not match the step schema' };
  throw badInput(`The signal does not match the step's schema: ${problem.message}`, { field: problem.field });
}
