import type { Sequelize } from 'sequelize';
import { preparedQuery } from '../db/prepared';
import { AppError } from '../errors';
import type { TokenGrant } from '../domain/token-grant';

/**
 * A token's daily credit cap (docs/tokens.md), counted in `api_token_day_spend` (migration 0022): per
 * capped token and UTC day, what the runs it started that day hold plus what the ended ones cost.
 * Every increase is one conditional statement on that row, so concurrent runs of a token can never
 * take it past the cap: the base credit when a run is admitted (here), each step's hold while it
 * runs (holdCredits), and the trigger of migration 0022 settles the hold to the cost when a run ends.
 */

/** Where a run's credits count: the capped token and the UTC day the run was created. */
export interface TokenSpend {
  tokenUid: string;
  day: string;
  cap: number;
}

/** The UTC day of `now` as PostgreSQL's `date` reads it. */
export function utcDay(now = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/** Whole seconds from `now` to the next UTC midnight (at least 1). */
export function secondsToNextUtcDay(now = new Date()): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/** The 429 of a run its token's cap cannot cover; Retry-After is the next UTC day. */
export function dailyCapReached(cap: number, now = new Date()): AppError {
  const retryAfter = secondsToNextUtcDay(now);
  return new AppError(
    'RateLimited',
    `This token's runs may take at most ${cap} credits per UTC day; retry after 00:00 UTC (Retry-After)`,
    { retryAfter },
  );
}

/** The spend a new run of the viewer's token counts toward, or null when the token has no cap (or there is no token). */
export function tokenSpendOf(grant: TokenGrant | undefined, now = new Date()): TokenSpend | null {
  if (!grant || grant.maxCreditsPerDay === null) return null;
  return { tokenUid: grant.tokenUid, day: utcDay(now), cap: grant.maxCreditsPerDay };
}

/** Adds `amount` to the token's day when it stays within the cap; false (and nothing added) otherwise. */
export async function reserveTokenSpend(sequelize: Sequelize, spend: TokenSpend, amount: number): Promise<boolean> {
  const rows = await preparedQuery<{ credits: string }>(
    sequelize,
    `INSERT INTO api_token_day_spend AS s (token_uid, day, credits)
       SELECT $1, $2::date, $3::bigint WHERE $3::bigint <= $4::bigint
     ON CONFLICT (token_uid, day) DO UPDATE SET credits = s.credits + EXCLUDED.credits
       WHERE s.credits + EXCLUDED.credits <= $4::bigint
     RETURNING credits`,
    [spend.tokenUid, spend.day, amount, spend.cap],
  );
  return rows.length === 1;
}

/** Gives back what reserveTokenSpend took for a run that was not admitted after all. */
export async function releaseTokenSpend(sequelize: Sequelize, spend: TokenSpend, amount: number): Promise<void> {
  await preparedQuery(
    sequelize,
    'UPDATE api_token_day_spend SET credits = GREATEST(credits - $3::bigint, 0) WHERE token_uid = $1 AND day = $2::date',
    [spend.tokenUid, spend.day, amount],
  );
}

/**
 * Admits a run of a capped token: its base credit is reserved on the token's day first (429 when
 * the cap cannot cover it) and given back when `admit` admits nothing or fails. Without a cap,
 * `admit` alone.
 */
export async function admitWithinTokenCap<T>(
  sequelize: Sequelize,
  spend: TokenSpend | null,
  amount: number,
  admit: () => Promise<T | null>,
): Promise<T | null> {
  if (!spend) return admit();
  if (!(await reserveTokenSpend(sequelize, spend, amount))) throw dailyCapReached(spend.cap);
  let admitted: T | null = null;
  try {
    admitted = await admit();
    return admitted;
  } finally {
    if (admitted === null) await releaseTokenSpend(sequelize, spend, amount);
  }
}

/** What each of these tokens' runs took today (UTC): for listing tokens. */
export async function spentToday(sequelize: Sequelize, tokenUids: readonly string[]): Promise<Map<string, number>> {
  if (tokenUids.length === 0) return new Map();
  const rows = await preparedQuery<{ token_uid: string; credits: string }>(
    sequelize,
    'SELECT token_uid, credits FROM api_token_day_spend WHERE token_uid = ANY($1::uuid[]) AND day = $2::date',
    [tokenUids, utcDay()],
  );
  return new Map(rows.map((row) => [row.token_uid, Number(row.credits)]));
}
