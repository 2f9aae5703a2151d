import type { Sequelize } from 'sequelize';
import { preparedQuery } from '../db/prepared';

/** The base cost of every run, held when the run is created and charged when it ends. */
export const RUN_BASE_CREDITS = 1;

/**
 * Reserves `amount` more credits for a RUNNING run, before a step that costs them starts. Atomic:
 * true when `credits - credits_held` of the run's user covered it and both held counters were raised
 * (and, for a run of a token with a daily cap, that day's count of the token too, only within the
 * cap: src/credits/token-spend.ts); false when the balance or the token's cap cannot cover it (the
 * run should end InsufficientCredits) or the run is no longer RUNNING. Rows are locked run, user,
 * token day — the order the statement that ends runs takes them (finishRuns: its runs, then their users,
 * then migration 0022's trigger at the statement's end) — so a hold and a charge of the same run never deadlock.
 */
export async function holdCredits(
  sequelize: Sequelize,
  run: { uid: string; userUid: string },
  amount: number,
): Promise<boolean> {
  if (!Number.isSafeInteger(amount) || amount < 0)
    throw new RangeError(`a credit hold must be a whole number ≥ 0, got ${amount}`);
  if (amount === 0) return true;
  const rows = await preparedQuery<{ uid: string }>(
    sequelize,
    `WITH run AS (
       SELECT uid, user_uid, spend_token_uid, spend_day FROM circuit_runs WHERE uid = $1 AND user_uid = $2 AND state = 'RUNNING' FOR UPDATE),
     payer AS (
       SELECT u.uid FROM users u JOIN run ON u.uid = run.user_uid WHERE u.credits - u.credits_held >= $3 FOR NO KEY UPDATE OF u),
     token_day AS (
       SELECT s.token_uid, s.day FROM api_token_day_spend s
         JOIN run ON s.token_uid = run.spend_token_uid AND s.day = run.spend_day
         JOIN api_tokens t ON t.uid = s.token_uid
        WHERE s.credits + $3 <= t.max_credits_per_day
          FOR NO KEY UPDATE OF s),
     covered AS (
       SELECT payer.uid FROM payer, run WHERE run.spend_token_uid IS NULL OR EXISTS (SELECT 1 FROM token_day)),
     spent AS (
       UPDATE api_token_day_spend s SET credits = s.credits + $3
         FROM token_day, covered WHERE s.token_uid = token_day.token_uid AND s.day = token_day.day),
     held AS (
       UPDATE users u SET credits_held = u.credits_held + $3
         FROM covered WHERE u.uid = covered.uid
         RETURNING u.uid)
     UPDATE circuit_runs r SET credits_held = r.credits_held + $3
       FROM held WHERE r.uid = $1
       RETURNING r.uid`,
    [run.uid, run.userUid, amount],
  );
  return rows.length === 1;
}
