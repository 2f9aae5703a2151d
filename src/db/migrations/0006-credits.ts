import type { Migration } from './migration';

/**
 * Credit holds and a ledger of every balance change (docs/runs.md, Credits; My runs and my credits).
 *
 * Holds: `users.credits_held` is what the caller's in-flight runs have reserved; a run or a costly
 * step starts only when `credits - credits_held` covers it, so concurrent runs can never spend more
 * than the balance. `circuit_runs.credits_held` is what one run reserved (kept after it ends, as a
 * record). Both are only raised by src/credits/holds.ts and the insert in createRun, and released by
 * the charge in finishRun.
 *
 * Ledger: signed `amount` (grants > 0, run charges ≤ 0), so for every user sum(amount) = credits.
 * Balances that existed before the ledger recorded grants become one opening grant per user, dated
 * at the user's creation, so that the sum holds for existing users too.
 */
export const credits: Migration = {
  name: '0006-credits',
  up: `
ALTER TABLE users ADD COLUMN credits_held bigint NOT NULL DEFAULT 0 CHECK (credits_held >= 0);
ALTER TABLE circuit_runs ADD COLUMN credits_held bigint NOT NULL DEFAULT 0 CHECK (credits_held >= 0);

ALTER TABLE credit_ledger ADD COLUMN kind text NOT NULL DEFAULT 'run';
-- Orders rows written in the same instant (listing is newest first).
ALTER TABLE credit_ledger ADD COLUMN seq bigserial;
ALTER TABLE credit_ledger ALTER COLUMN kind DROP DEFAULT;
ALTER TABLE credit_ledger ALTER COLUMN run_uid DROP NOT NULL;
ALTER TABLE credit_ledger ALTER COLUMN cost DROP NOT NULL;
ALTER TABLE credit_ledger DROP CONSTRAINT credit_ledger_amount_check;
UPDATE credit_ledger SET amount = -amount;
ALTER TABLE credit_ledger ADD CONSTRAINT credit_ledger_kind_check CHECK (
  (kind = 'run' AND run_uid IS NOT NULL AND cost IS NOT NULL AND amount <= 0)
  OR (kind = 'grant' AND run_uid IS NULL AND cost IS NULL AND amount > 0));

INSERT INTO credit_ledger (user_uid, kind, amount, balance_after, created_at)
SELECT u.uid, 'grant', u.credits - COALESCE(charges.total, 0), u.credits - COALESCE(charges.total, 0), u.created_at
  FROM users u
  LEFT JOIN (SELECT user_uid, sum(amount) AS total FROM credit_ledger GROUP BY user_uid) charges ON charges.user_uid = u.uid
 WHERE u.credits - COALESCE(charges.total, 0) > 0;

DROP INDEX credit_ledger_user_idx;
CREATE INDEX credit_ledger_user_idx ON credit_ledger (user_uid, created_at DESC, seq DESC);
CREATE INDEX circuit_runs_user_state_idx ON circuit_runs (user_uid, state, created_at DESC);
`,
};
