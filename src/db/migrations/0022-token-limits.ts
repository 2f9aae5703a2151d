import type { Migration } from './migration';

/**
 * Token limits (docs/tokens.md): what an API token may do, until when, on which circuits, and how many
 * credits its runs may take per UTC day.
 *
 * - `api_tokens.scopes` (null: every scope), `expires_at`, `circuit_uids` (null: any circuit) and
 *   `max_credits_per_day` (null: no cap). A token never changes after it is created.
 * - `api_token_day_spend` counts, per capped token and UTC day, what that day's runs of the token
 *   hold plus what its ended ones were charged. Raised atomically by the credit holds (the base
 *   credit at admission, src/credits/token-spend.ts; each step's hold, src/credits/holds.ts) only
 *   while it stays within the cap.
 * - `circuit_runs.spend_token_uid` / `spend_day`: the capped token and the UTC day a run's credits
 *   count toward (the day it was created); null for runs of uncapped tokens, sessions and passwords.
 * - The trigger `circuit_runs_settle_token_spend` (AFTER UPDATE OF state, when such a run ends):
 *   the run's hold is replaced by its cost on that day's count, so an unused hold is given back.
 * - `circuit_schedules.token_uid`: a schedule created with a token fires under that token's limits.
 */
export const tokenLimits: Migration = {
  name: '0022-token-limits',
  up: `
ALTER TABLE api_tokens
  ADD COLUMN scopes text[],
  ADD COLUMN expires_at timestamptz,
  ADD COLUMN circuit_uids uuid[],
  ADD COLUMN max_credits_per_day bigint CHECK (max_credits_per_day IS NULL OR max_credits_per_day >= 0);

CREATE TABLE api_token_day_spend (
  token_uid uuid NOT NULL REFERENCES api_tokens(uid) ON DELETE CASCADE,
  day date NOT NULL,
  credits bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (token_uid, day)
);

ALTER TABLE circuit_runs ADD COLUMN spend_token_uid uuid, ADD COLUMN spend_day date;

CREATE FUNCTION circuit_runs_settle_token_spend() RETURNS trigger AS $$
BEGIN
  UPDATE api_token_day_spend
     SET credits = GREATEST(credits + COALESCE(NEW.credits_cost, 0) - NEW.credits_held, 0)
   WHERE token_uid = NEW.spend_token_uid AND day = NEW.spend_day;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER circuit_runs_settle_token_spend AFTER UPDATE OF state ON circuit_runs
  FOR EACH ROW WHEN (NEW.spend_token_uid IS NOT NULL AND OLD.state IN ('PROVISIONED', 'RUNNING') AND NEW.state IN ('COMPLETED', 'EXCEPTION'))
  EXECUTE FUNCTION circuit_runs_settle_token_spend();

ALTER TABLE circuit_schedules ADD COLUMN token_uid uuid REFERENCES api_tokens(uid) ON DELETE CASCADE;
`,
};
