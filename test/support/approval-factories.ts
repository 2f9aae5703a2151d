import { QueryTypes } from 'sequelize';
import { CircuitRun } from '../../src/models/CircuitRun';
import type { TestUser } from './factories';
import { HELLO_DEFINITION } from './factories';
import { makeRunnableCircuit } from './run-factories';

/**
 * A run that waits on an approval step, made directly in the database as the engine would leave it
 * (docs/runs.md, Approvals): RUNNING in attempt 1 (no job is queued and its heartbeat is never stale, so no worker or
 * orphan sweep touches it), with a `circuit_run_steps` row (kind approval, status waiting) and `paused_at`
 * set in the same statement.
 */
export async function makeWaitingRun(
  owner: TestUser,
  options: { isPublic?: boolean; stepId?: string; prompt?: string; expiresInS?: number; circuitName?: string } = {},
) {
  const { circuit, version } = await makeRunnableCircuit(
    owner,
    HELLO_DEFINITION,
    options.circuitName ? { name: options.circuitName } : {},
  );
  const now = new Date();
  const run = await CircuitRun.create({
    user_uid: owner.user.uid,
    circuit_uid: circuit.uid,
    circuit_version_uid: version.uid,
    input: { name: 'Ada' },
    state: 'RUNNING',
    is_public: options.isPublic ?? false,
    attempt: 1,
    enqueued_at: now,
    started_at: now,
    // Held by a live worker as far as any sweep can tell: a heartbeat ahead of the clock is never stale, so
    // no worker of the test app takes this synthetic run over (and runs it to COMPLETED) while a test reads
    // it, however slowly a loaded machine gets through the test. With `now`, the takeover came after the
    // stale interval of real time and raced the test's reads.
    heartbeat_at: new Date(now.getTime() + 3_600_000),
    deadline_at: new Date(now.getTime() + 3_600_000),
  });
  const stepId = options.stepId ?? 'review';
  await addWaitingStep(run.uid, stepId, options.prompt ?? 'Ship it?', options.expiresInS ?? 3600);
  return { run, circuit, stepId };
}

/** The engine's insert of a waiting approval row, with `paused_at` set in the same statement. */
export async function addWaitingStep(
  runUid: string,
  stepId: string,
  prompt: string,
  expiresInS = 3600,
  startedAt = new Date(),
): Promise<void> {
  await CircuitRun.sequelize!.query(
    `WITH step AS (
       INSERT INTO circuit_run_steps (run_uid, path, kind, status, attempt, prompt, expires_at, on_timeout, started_at)
       VALUES ($1, $2, 'approval', 'waiting', 1, $3, now() + make_interval(secs => $4), 'reject', $5)
       RETURNING run_uid)
     UPDATE circuit_runs SET paused_at = COALESCE(paused_at, now()), updated_at = now() WHERE uid IN (SELECT run_uid FROM step)`,
    { bind: [runUid, stepId, prompt, expiresInS, startedAt] },
  );
}

/** A step row as stored. */
export async function stepRow(
  runUid: string,
  stepId: string,
): Promise<{ kind: string; status: string; decision: any } | undefined> {
  const [row] = await CircuitRun.sequelize!.query<{ kind: string; status: string; decision: any }>(
    'SELECT kind, status, decision FROM circuit_run_steps WHERE run_uid = $1 AND path = $2',
    { bind: [runUid, stepId], type: QueryTypes.SELECT },
  );
  return row;
}
