import type { Sequelize } from 'sequelize';
import { preparedQuery } from '../db/prepared';

/** The base cost of every run, held when the run is created and charged when it ends. */
export const RUN_BASE_CREDITS = 1;

/**
 * Reserves `amount` more credits for a RUNNING run, before a step that costs them starts. Atomic:
 * true when `credits - credits_held` of the run's user covered it and both held counters were raised;
 * false when the balance cannot cover it (the run should end InsufficientCredits) or the run is no
 * longer RUNNING. The run row is locked before the user row, the same order as finishRun, so a hold
 * and a charge of the same run never deadlock.
 */
export async function holdCredits(sequelize: Sequelize, run: { uid: string; userUid: string }, amount: number): Promise<boolean> {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError(`a credit hold must be a whole number ≥ 0, got ${amount}`);
  if (amount === 0) return true;
  const rows = await preparedQuery<{ uid: string }>(
    sequelize,
    `WITH run AS (
       SELECT uid, user_uid FROM circuit_runs WHERE uid = $1 AND user_uid = $2 AND state = 'RUNNING' FOR UPDATE),
     held AS (
       UPDATE users u SET credits_held = u.credits_held + $3
         FROM run WHERE u.uid = run.user_uid AND u.credits - u.credits_held >= $3
         RETURNING u.uid)
     UPDATE circuit_runs r SET credits_held = r.credits_held + $3
       FROM held WHERE r.uid = $1
       RETURNING r.uid`,
    [run.uid, run.userUid, amount],
  );
  return rows.length === 1;
}
