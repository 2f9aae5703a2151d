/**
 * The charge that ends runs (docs/runs.md, Credits), as SQL for the statement that ends them (finishRuns in
 * src/runs/transitions.ts): release what each run held and take its cost, in the same statement, so a run is
 * charged exactly once, in the transaction that ends it.
 *
 * `ended` must name a CTE that returns each ended run's `uid`, `user_uid`, `held` (its credits_held), `cost`
 * and `ord` (the order its charge is taken in, per user). Each user's row is locked once (users in uid order,
 * so two such statements cannot deadlock on them), and the runs of a user are charged one after the other, each
 * from the balance the previous one left, as one statement per run would: the charge is the cost, but never
 * more than the run held plus what no other run holds — a run whose steps were all held first (cost ≤ held)
 * pays its cost; one that cost more than it held cannot take credits that other in-flight runs reserved — and
 * a balance never goes below 0. Defines the CTE `charged_runs`: `user_uid`, `run_uid`, `amount` (what was
 * taken, ≥ 0) and `balance_after`, from each run's ledger row.
 */
export function chargeRunsSql(ended: string): string {
  return `locked AS (
       SELECT u.uid, u.credits, u.credits_held FROM users u
        WHERE u.uid IN (SELECT user_uid FROM ${ended})
        ORDER BY u.uid
          FOR UPDATE),
     ordered AS (
       SELECT uid, user_uid, held, cost, row_number() OVER (PARTITION BY user_uid ORDER BY ord) AS n FROM ${ended}),
     priced (user_uid, n, run_uid, cost, amount, credits, credits_held) AS (
       SELECT uid, 0::bigint, NULL::uuid, 0::bigint, 0::bigint, credits, credits_held FROM locked
       UNION ALL
       SELECT p.user_uid, o.n, o.uid, o.cost, c.amount, p.credits - c.amount, GREATEST(p.credits_held - o.held, 0)
         FROM priced p
         JOIN ordered o ON o.user_uid = p.user_uid AND o.n = p.n + 1
        CROSS JOIN LATERAL (
          SELECT LEAST(o.cost::bigint, o.held + GREATEST(p.credits - p.credits_held, 0), p.credits) AS amount) c),
     charged AS (
       UPDATE users u SET credits = last.credits, credits_held = last.credits_held
         FROM (SELECT DISTINCT ON (user_uid) user_uid, credits, credits_held FROM priced ORDER BY user_uid, n DESC) last
        WHERE u.uid = last.user_uid),
     charged_runs AS (
       INSERT INTO credit_ledger (user_uid, kind, run_uid, cost, amount, balance_after)
       SELECT user_uid, 'run', run_uid, cost, -amount, credits FROM priced WHERE n > 0 ORDER BY user_uid, n
       RETURNING user_uid, run_uid, -amount AS amount, balance_after)`;
}
