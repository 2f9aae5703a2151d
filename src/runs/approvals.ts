import { QueryTypes, type Sequelize } from 'sequelize';
import type { RunDeps } from './ports';
import { MAX_APPROVAL_COMMENT_CHARS, MAX_APPROVAL_DATA_BYTES, TERMINAL_STATES, type RunState } from '../domain/runs';
import { badInput, conflict, notFound } from '../errors';
import { textFlaw } from '../input-hygiene';
import { preparedQuery } from '../db/prepared';
import type { SqlEnqueue } from '../queue/agenda';
import { wakeHeard, wakeInStatement, type WakeOutcome } from './wake';

/**
 * Approval steps, the API side (docs/runs.md, Approvals): reading what a run waits for and recording a person's
 * decision. The engine owns the rest of the step's life: it inserts the `circuit_run_steps` row
 * (kind `approval`, status `waiting`) when the run reaches the step, hears the `wake` message this
 * module publishes, and ends the wait (approved: the step's output is the decision; rejected: the run
 * ends EXCEPTION `Rejected`), and it handles timeouts and cancels.
 *
 * Who writes what, so that a cached read of a run is never stale: every write of a waiting row
 * changes `circuit_runs` in the same statement (here: the decision bumps `updated_at`; the engine:
 * its insert sets `paused_at`, and the wait ends by updating the run as it resumes or ends it).
 * `waiting_for` itself is never cached: it is read from `circuit_run_steps` on each read of a
 * RUNNING run, for its owner only (readWaitingSteps, batched per request).
 */

/** What a person decides. */
export interface ApprovalDecision {
  approved: boolean;
  comment?: string | null;
  data?: Record<string, unknown> | null;
}

/** The decision as it is recorded on the step (and becomes an approved step's output). */
export interface RecordedDecision {
  approved: boolean;
  comment: string | null;
  data: Record<string, unknown> | null;
  /** ISO 8601, from the database clock (the clock of `expires_at`). */
  resolved_at: string;
  /** Set when the step's timeout decided (`on_timeout`), not a person. */
  timed_out?: boolean;
}

export interface ApprovalOutcome {
  decision: RecordedDecision;
  /** True when this very decision had been recorded before: nothing changed and no wake was sent. */
  repeated: boolean;
}

/** A step a run waits on, as `waiting_for` shows it (its URLs are added by whoever presents it). */
export interface WaitingStep {
  step_id: string;
  kind: 'approval' | 'signal' | 'time';
  prompt: string | null;
  schema: unknown;
  expires_at: Date | null;
}

/**
 * Throws BadClientData naming the field when a decision breaks the limits (comment ≤ 2000 characters,
 * data a JSON object ≤ 64 KiB serialized). NUL characters, lone surrogates and nesting depth are the
 * input-hygiene pass's, which every transport applies before this.
 */
export function checkApprovalDecision(decision: ApprovalDecision): void {
  const { comment, data } = decision;
  if (comment !== null && comment !== undefined && [...comment].length > MAX_APPROVAL_COMMENT_CHARS) {
    throw badInput(`comment must be at most ${MAX_APPROVAL_COMMENT_CHARS} characters`, { field: 'comment' });
  }
  if (data !== null && data !== undefined) {
    if (typeof data !== 'object' || Array.isArray(data))
      throw badInput('data must be a JSON object', { field: 'data' });
    if (Buffer.byteLength(JSON.stringify(data), 'utf8') > MAX_APPROVAL_DATA_BYTES) {
      throw badInput(`data must be at most ${MAX_APPROVAL_DATA_BYTES / 1024} KiB as JSON`, { field: 'data' });
    }
  }
}

/**
 * Records the decision only while the step is an approval that waits, has not expired, and its run is
 * RUNNING, and wakes the run (wakeInStatement). The run row is locked first (its lock orders this against
 * whatever else ends or changes the run, and a run that stopped RUNNING meanwhile is seen as such), then
 * the step row is written.
 */
function decideSql(sqlEnqueue: SqlEnqueue | undefined): string {
  const wake = wakeInStatement(sqlEnqueue);
  return `
WITH target AS (
  SELECT uid, parked_at IS NOT NULL AS parked FROM circuit_runs WHERE uid = $1 AND state = 'RUNNING' FOR NO KEY UPDATE
), resolved AS (
  UPDATE circuit_run_steps s
     SET status = CASE WHEN $3::boolean THEN 'approved' ELSE 'rejected' END,
         decision = jsonb_build_object(
           'approved', $3::boolean,
           'comment', $4::text,
           'data', $5::jsonb,
           'resolved_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
    FROM target
   WHERE s.run_uid = target.uid AND s.path = $2 AND s.kind = 'approval' AND s.status = 'waiting'
     AND (s.expires_at IS NULL OR s.expires_at > now())
  RETURNING s.decision
), ${wake.ctes}
SELECT (SELECT decision FROM resolved) AS decision, ${wake.columns}`;
}

/** Why nothing was recorded: the run and the step (if any) as they are now. */
const EXPLAIN = `
SELECT r.state, s.kind, s.status, s.decision, s.expires_at, s.expires_at <= now() AS expired
  FROM circuit_runs r
  LEFT JOIN circuit_run_steps s ON s.run_uid = r.uid AND s.path = $2
 WHERE r.uid = $1`;

interface StepNow {
  state: RunState;
  kind: string | null;
  status: string | null;
  decision: RecordedDecision | null;
  expires_at: Date | null;
  expired: boolean | null;
}

const quoted = (stepId: string) => JSON.stringify(stepId.length > 100 ? `${stepId.slice(0, 100)}…` : stepId);

/**
 * Resolves the approval step `stepId` of run `runUid`; the caller has checked the run
 * policy (`approve`) and nothing else. On success the worker holding the run is woken over the run
 * event bus. The same decision (same `approved`) again is a success that changes nothing; a different
 * one, a step that is not an approval waiting for a decision (unknown, decided, expired), or a run that
 * is not RUNNING is 409 Conflict.
 */
export async function resolveApproval(
  deps: RunDeps,
  runUid: string,
  stepId: string,
  decision: ApprovalDecision,
): Promise<ApprovalOutcome> {
  checkApprovalDecision(decision);
  // PostgreSQL cannot hold such an id (a REST path parameter is not checked by the hygiene pass): no step has it.
  if (textFlaw(stepId)) throw conflict(`Step ${quoted(stepId)} is not waiting for an approval in this run`);
  const bind = [
    runUid,
    stepId,
    decision.approved,
    decision.comment ?? null,
    decision.data === undefined || decision.data === null ? null : JSON.stringify(decision.data),
  ];
  // A step that changed between the two statements (it began waiting, say) is tried once more.
  for (let attempt = 1; ; attempt++) {
    const [recorded] = await preparedQuery<WakeOutcome & { decision: RecordedDecision | null }>(
      deps.sequelize,
      decideSql(deps.queue.sqlEnqueue),
      bind,
    );
    if (recorded?.decision) {
      await wakeHeard(deps, runUid, recorded);
      return { decision: recorded.decision, repeated: false };
    }
    const [now] = await deps.sequelize.query<StepNow>(EXPLAIN, { bind: [runUid, stepId], type: QueryTypes.SELECT });
    if (!now) throw notFound('Circuit run');
    const step = `Step ${quoted(stepId)}`;
    if (now.kind === null) throw conflict(`${step} is not waiting for an approval in this run`);
    if (now.kind !== 'approval') throw conflict(`${step} is not an approval step`);
    if (now.status === 'approved' || now.status === 'rejected') {
      if (now.decision?.approved === decision.approved) return { decision: now.decision, repeated: true };
      throw conflict(`${step} was already ${now.status}; a different decision cannot be recorded`);
    }
    if (now.status !== 'waiting') throw conflict(`${step} is not waiting for an approval`);
    if (now.state !== 'RUNNING')
      throw conflict(`The run is ${now.state}, not RUNNING: ${step.toLowerCase()} can no longer be decided`);
    if (now.expired)
      throw conflict(`${step} expired at ${new Date(now.expires_at!).toISOString()}; its timeout decides it`);
    if (attempt >= 2) throw conflict(`${step} could not be decided; try again`);
  }
}

/**
 * The steps each run waits on (approvals, signals, time), oldest first: for the `waitingFor` loader, which
 * batches the runs of one request into one statement.
 */
export async function readWaitingSteps(sequelize: Sequelize, runUids: readonly string[]): Promise<WaitingStep[][]> {
  const rows = await sequelize.query<WaitingStep & { run_uid: string }>(
    `SELECT run_uid, path AS step_id, CASE WHEN kind = 'approval' THEN 'approval' ELSE wait_for END AS kind,
            prompt, schema, expires_at
       FROM circuit_run_steps
      WHERE run_uid = ANY($1::uuid[]) AND status = 'waiting'
      ORDER BY started_at, path`,
    { bind: [[...runUids]], type: QueryTypes.SELECT },
  );
  const byRun = new Map<string, WaitingStep[]>();
  for (const { run_uid, ...step } of rows) {
    let list = byRun.get(run_uid);
    if (!list) byRun.set(run_uid, (list = []));
    list.push(step);
  }
  return runUids.map((uid) => byRun.get(uid) ?? []);
}

/** A waiting approval step of one of a user's runs, for the /settings Runs page. */
export interface WaitingApproval extends Pick<WaitingStep, 'step_id' | 'prompt' | 'expires_at'> {
  run_uid: string;
  circuit_uid: string;
  circuit_name: string;
  circuit_owner: string;
}

/** The approval steps waiting on `userUid`'s RUNNING runs, oldest first (at most `limit`). */
export async function waitingApprovalsOf(
  sequelize: Sequelize,
  userUid: string,
  limit = 50,
): Promise<WaitingApproval[]> {
  return sequelize.query<WaitingApproval>(
    `SELECT s.run_uid, s.path AS step_id, s.prompt, s.expires_at, r.circuit_uid, c.name AS circuit_name, o.username AS circuit_owner
       FROM circuit_runs r
       JOIN circuit_run_steps s ON s.run_uid = r.uid AND s.kind = 'approval' AND s.status = 'waiting'
       JOIN circuits c ON c.uid = r.circuit_uid
       JOIN users o ON o.uid = c.owner_uid
      WHERE r.user_uid = $1 AND r.state = 'RUNNING'
      ORDER BY s.started_at, r.uid, s.path
      LIMIT $2`,
    { bind: [userUid, limit], type: QueryTypes.SELECT },
  );
}

/**
 * An approval step as its decision page shows it (docs/runs.md, Decision URLs). `status`: `waiting` (open for a
 * decision), `approved` or `rejected` (`decision` says by whom and when), `expired` (its timeout passed and is about
 * to decide it), `ended` (the run ended without a decision), `pending` (the run has not reached the step yet).
 */
export interface DecisionView {
  circuit_name: string;
  prompt: string | null;
  expires_at: Date | null;
  status: 'waiting' | 'approved' | 'rejected' | 'expired' | 'ended' | 'pending';
  decision: RecordedDecision | null;
}

const DECISION_VIEW = `
SELECT c.name AS circuit_name, r.state, s.kind, s.status, s.prompt, s.expires_at, s.decision,
       s.expires_at <= now() AS expired
  FROM circuit_runs r
  JOIN circuits c ON c.uid = r.circuit_uid
  LEFT JOIN circuit_run_steps s ON s.run_uid = r.uid AND s.path = $2
 WHERE r.uid = $1`;

/**
 * The approval step `path` of run `runUid` for its decision page; null when there is no such run, or the path
 * names a step that is not an approval. The caller has verified the URL's key (nothing else is checked here).
 */
export async function readDecisionView(
  sequelize: Sequelize,
  runUid: string,
  path: string,
): Promise<DecisionView | null> {
  if (textFlaw(path)) return null;
  const [row] = await sequelize.query<
    Omit<StepNow, 'decision'> & { circuit_name: string; prompt: string | null; decision: RecordedDecision | null }
  >(DECISION_VIEW, { bind: [runUid, path], type: QueryTypes.SELECT });
  if (!row || (row.kind !== null && row.kind !== 'approval')) return null;
  const ended = (TERMINAL_STATES as readonly string[]).includes(row.state);
  const status: DecisionView['status'] =
    row.status === 'approved' || row.status === 'rejected'
      ? row.status
      : ended
        ? 'ended'
        : row.kind === null
          ? 'pending'
          : row.expired
            ? 'expired'
            : 'waiting';
  return {
    circuit_name: row.circuit_name,
    prompt: row.prompt,
    expires_at: row.expires_at === null ? null : new Date(row.expires_at),
    status,
    decision: status === 'approved' || status === 'rejected' ? row.decision : null,
  };
}
