import { QueryTypes, Sequelize } from 'sequelize';
import type { RunState } from '../models/CircuitRun';

/**
 * Every state change of a run is one guarded UPDATE here (spec §3), so a state never goes backwards
 * and a terminal state never changes:
 *   PROVISIONED → RUNNING            claimRun (also re-claims a RUNNING run whose worker went silent)
 *   RUNNING → COMPLETED | EXCEPTION  finishRun, only by the attempt that holds the run, charging
 *                                    credits in the same transaction
 */

export interface ClaimedRun {
  uid: string;
  user_uid: string;
  circuit_uid: string;
  circuit_version_uid: string;
  input: Record<string, unknown>;
  /** 1 on the first claim (the run just left PROVISIONED); higher when taken over from a dead worker. */
  attempt: number;
}

/**
 * PROVISIONED → RUNNING, or takes over a RUNNING run whose heartbeat is older than `staleAfterMs`.
 * Returns null when the run is not claimable (terminal, or held by a live worker).
 */
export async function claimRun(sequelize: Sequelize, uid: string, staleAfterMs: number): Promise<ClaimedRun | null> {
  const rows = await sequelize.query<ClaimedRun>(
    `UPDATE circuit_runs
        SET state = 'RUNNING', attempt = attempt + 1, heartbeat_at = now(), started_at = COALESCE(started_at, now()), updated_at = now()
      WHERE uid = $1
        AND (state = 'PROVISIONED'
             OR (state = 'RUNNING' AND (heartbeat_at IS NULL OR heartbeat_at < now() - make_interval(secs => $2))))
      RETURNING uid, user_uid, circuit_uid, circuit_version_uid, input, attempt`,
    { bind: [uid, staleAfterMs / 1000], type: QueryTypes.SELECT },
  );
  return rows[0] ?? null;
}

/** Keeps a claim alive; false when the run is no longer this attempt's (taken over or ended). */
export async function heartbeatRun(sequelize: Sequelize, uid: string, attempt: number): Promise<boolean> {
  const rows = await sequelize.query(
    `UPDATE circuit_runs SET heartbeat_at = now() WHERE uid = $1 AND state = 'RUNNING' AND attempt = $2 RETURNING uid`,
    { bind: [uid, attempt], type: QueryTypes.SELECT },
  );
  return rows.length === 1;
}

export interface RunEnding {
  uid: string;
  attempt: number;
  state: Extract<RunState, 'COMPLETED' | 'EXCEPTION'>;
  resultBlob?: unknown;
  metrics?: Record<string, unknown> | null;
  failureReason?: string | null;
  /** What the run cost: 1 + its steps' credits. */
  cost: number;
}

export interface RunCharge { userUid: string; cost: number; amount: number; balanceAfter: number }

/**
 * RUNNING → COMPLETED | EXCEPTION for the attempt holding the run, and its one charge, in one
 * transaction. The balance never goes below 0: when it cannot cover the cost, what is left is taken
 * (the ledger records both `cost` and `amount`). Returns null when the run was not this attempt's to end.
 */
export async function finishRun(sequelize: Sequelize, ending: RunEnding): Promise<RunCharge | null> {
  return sequelize.transaction(async (transaction) => {
    const ended = await sequelize.query<{ user_uid: string }>(
      `UPDATE circuit_runs
          SET state = $3, ended_at = now(), updated_at = now(), heartbeat_at = NULL,
              result_blob = $4::jsonb, metrics = $5::jsonb, failure_reason = $6, credits_cost = $7
        WHERE uid = $1 AND state = 'RUNNING' AND attempt = $2
        RETURNING user_uid`,
      {
        bind: [
          ending.uid,
          ending.attempt,
          ending.state,
          ending.state === 'COMPLETED' ? JSON.stringify(ending.resultBlob ?? null) : null,
          ending.state === 'COMPLETED' && ending.metrics ? JSON.stringify(ending.metrics) : null,
          ending.failureReason ?? null,
          ending.cost,
        ],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    if (ended.length === 0) return null;
    const userUid = ended[0].user_uid;
    const [user] = await sequelize.query<{ credits: string }>('SELECT credits FROM users WHERE uid = $1 FOR UPDATE', {
      bind: [userUid], type: QueryTypes.SELECT, transaction,
    });
    const before = Number(user?.credits ?? 0);
    const amount = Math.min(ending.cost, before);
    const balanceAfter = before - amount;
    await sequelize.query(
      `WITH charged AS (UPDATE users SET credits = $3 WHERE uid = $1)
       INSERT INTO credit_ledger (user_uid, run_uid, cost, amount, balance_after) VALUES ($1, $2, $4, $5, $3)`,
      { bind: [userUid, ending.uid, balanceAfter, ending.cost, amount], transaction },
    );
    return { userUid, cost: ending.cost, amount, balanceAfter };
  });
}

/**
 * Runs a sweeper should queue again: PROVISIONED runs never queued (the process died between insert
 * and enqueue), and runs stuck for `stuckAfterMs` (a lost job, or RUNNING with a silent worker).
 * Marks them queued now, so each is picked once per period.
 */
export async function claimRunsToRequeue(sequelize: Sequelize, graceMs: number, stuckAfterMs: number, limit = 100): Promise<string[]> {
  const rows = await sequelize.query<{ uid: string }>(
    `UPDATE circuit_runs SET enqueued_at = now()
      WHERE uid IN (
        SELECT uid FROM circuit_runs
         WHERE state IN ('PROVISIONED', 'RUNNING')
           AND ((state = 'PROVISIONED' AND enqueued_at IS NULL AND created_at < now() - make_interval(secs => $1))
             OR (COALESCE(enqueued_at, created_at) < now() - make_interval(secs => $2)
                 AND (state = 'PROVISIONED' OR heartbeat_at IS NULL OR heartbeat_at < now() - make_interval(secs => $2))))
         ORDER BY created_at
         LIMIT $3
         FOR UPDATE SKIP LOCKED)
      RETURNING uid`,
    { bind: [graceMs / 1000, stuckAfterMs / 1000, limit], type: QueryTypes.SELECT },
  );
  return rows.map((r) => r.uid);
}

export async function markEnqueued(sequelize: Sequelize, uid: string): Promise<void> {
  await sequelize.query('UPDATE circuit_runs SET enqueued_at = now() WHERE uid = $1 AND enqueued_at IS NULL', { bind: [uid] });
}
