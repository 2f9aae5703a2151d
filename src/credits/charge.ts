/**
 * The charge that ends a run (docs/runs.md, Credits), as SQL for the statement that ends it (finishRun in
 * src/runs/transitions.ts, and any other path that ends a run): release what the run held and
 * take its cost, in the same statement, so a run is charged exactly once, in the transaction that
 * ends it.
 *
 * `ended` must name a CTE that returns the ended run's `uid`, `user_uid` and `credits_held` (one row,
 * or none when the run was not this caller's to end). The charge is the cost, but never more than
 * the run held plus what no other run holds: a run whose steps were all held first (cost ≤ held)
 * pays its cost; one that cost more than it held cannot take credits that other in-flight runs
 * reserved, and a balance never goes below 0. The result selects `user_uid`, `cost`, `amount`
 * (what was taken, ≥ 0) and `balance_after` from the ledger row.
 */
export function chargeRunSql({
  ended,
  cost,
  extraColumns = '',
}: {
  ended: string;
  cost: string;
  extraColumns?: string;
}): string {
  return `locked AS (
       SELECT u.uid, u.credits, u.credits_held, e.uid AS run_uid, e.credits_held AS run_held
         FROM users u JOIN ${ended} e ON u.uid = e.user_uid
          FOR UPDATE OF u),
     charged AS (
       UPDATE users u
          SET credits = l.credits - c.amount,
              credits_held = GREATEST(l.credits_held - l.run_held, 0)
         FROM locked l
        CROSS JOIN LATERAL (SELECT LEAST(${cost}::bigint, l.run_held + GREATEST(l.credits - l.credits_held, 0), l.credits) AS amount) c
        WHERE u.uid = l.uid
        RETURNING u.uid, l.run_uid, c.amount, u.credits AS balance_after)
     INSERT INTO credit_ledger (user_uid, kind, run_uid, cost, amount, balance_after)
       SELECT charged.uid, 'run', charged.run_uid, ${cost}::bigint, -charged.amount, charged.balance_after FROM charged
     RETURNING user_uid, cost, -amount AS amount, balance_after${extraColumns}`;
}
