import crypto from 'node:crypto';
import { ApiToken, User } from '../models';
import { badInput, conflict } from '../errors';
import { insertWithinLimit } from '../db/count-limit';
import { isUid } from '../ids';
import { generateToken, hashToken } from '../auth/tokens';
import { isTokenScope } from '../domain/token-grant';
import { TOKEN_SCOPES, type TokenScope } from '../domain/token-scopes';

/** The most circuits one token's allow-list may name. */
export const MAX_TOKEN_CIRCUITS = 100;
/** The furthest a token may expire: ten years. */
const MAX_EXPIRY_MS = 10 * 366 * 86_400_000;
// A GraphQL Int carries it.
const MAX_CREDITS_PER_DAY = 2_147_483_647;

/** A token's limits as a caller asks for them (docs/tokens.md); each absent means none. */
export interface TokenLimitsInput {
  scopes?: readonly string[] | null;
  expiresAt?: Date | null;
  circuitUids?: readonly string[] | null;
  maxCreditsPerDay?: number | null;
}

interface TokenLimits {
  scopes: TokenScope[] | null;
  expires_at: Date | null;
  circuit_uids: string[] | null;
  max_credits_per_day: number | null;
}

/** Checks the limits asked for; a bad one is a 400 naming its field (snake_case, as REST and the CLI name them). */
export function checkTokenLimits(input: TokenLimitsInput, now = new Date()): TokenLimits {
  let scopes: TokenScope[] | null = null;
  if (input.scopes != null) {
    const unknown = input.scopes.find((scope) => !isTokenScope(scope));
    if (unknown !== undefined)
      throw badInput(
        `scopes: unknown scope "${String(unknown).slice(0, 40)}"; the scopes are ${TOKEN_SCOPES.join(', ')}`,
        { field: 'scopes' },
      );
    if (input.scopes.length === 0)
      throw badInput('scopes must name at least one scope (leave it out for every scope)', { field: 'scopes' });
    scopes = TOKEN_SCOPES.filter((scope) => input.scopes!.includes(scope));
  }
  let expiresAt: Date | null = null;
  if (input.expiresAt != null) {
    expiresAt = input.expiresAt;
    if (Number.isNaN(expiresAt.getTime())) throw badInput('expires_at must be a date-time', { field: 'expires_at' });
    if (expiresAt.getTime() <= now.getTime())
      throw badInput('expires_at must be in the future', { field: 'expires_at' });
    if (expiresAt.getTime() > now.getTime() + MAX_EXPIRY_MS)
      throw badInput('expires_at must be within ten years', { field: 'expires_at' });
  }
  let circuitUids: string[] | null = null;
  if (input.circuitUids != null) {
    if (input.circuitUids.length === 0)
      throw badInput('circuit_uids must name at least one circuit (leave it out for any circuit)', {
        field: 'circuit_uids',
      });
    if (input.circuitUids.length > MAX_TOKEN_CIRCUITS)
      throw badInput(`circuit_uids may name at most ${MAX_TOKEN_CIRCUITS} circuits`, { field: 'circuit_uids' });
    const bad = input.circuitUids.find((uid) => !isUid(uid));
    if (bad !== undefined)
      throw badInput(`circuit_uids: "${String(bad).slice(0, 40)}" is not a circuit uid`, { field: 'circuit_uids' });
    circuitUids = [...new Set(input.circuitUids.map((uid) => uid.toLowerCase()))];
  }
  const cap = input.maxCreditsPerDay ?? null;
  if (cap !== null && (!Number.isSafeInteger(cap) || cap < 1 || cap > MAX_CREDITS_PER_DAY)) {
    throw badInput(`max_credits_per_day must be a whole number from 1 to ${MAX_CREDITS_PER_DAY}`, {
      field: 'max_credits_per_day',
    });
  }
  return { scopes, expires_at: expiresAt, circuit_uids: circuitUids, max_credits_per_day: cap };
}

/** Unrevoked tokens one user may hold: each is a credential to audit and a row every sign-in page lists. */
export const MAX_API_TOKENS_PER_USER = 100;

/** Creates a token and returns it in the clear: the only time it is ever shown. */
export async function createApiToken(
  user: User,
  label = '',
  limits: TokenLimitsInput = {},
): Promise<{ token: string; record: ApiToken }> {
  if (label.length > 100) throw badInput('label must be at most 100 characters', { field: 'label' });
  const checked = checkTokenLimits(limits);
  const token = generateToken();
  const row = await insertWithinLimit<ApiToken>(
    ApiToken.sequelize!,
    `api_tokens:${user.uid}`,
    `INSERT INTO api_tokens (uid, user_uid, token_hash, label, scopes, expires_at, circuit_uids, max_credits_per_day)
     SELECT $1, $2, $3, $4, $6::text[], $7::timestamptz, $8::uuid[], $9::bigint
      WHERE (SELECT count(*) FROM api_tokens WHERE user_uid = $2 AND revoked_at IS NULL) < $5
     RETURNING *`,
    [
      crypto.randomUUID(),
      user.uid,
      hashToken(token),
      label,
      MAX_API_TOKENS_PER_USER,
      checked.scopes,
      checked.expires_at,
      checked.circuit_uids,
      checked.max_credits_per_day,
    ],
  );
  if (!row) throw conflict(`You already have ${MAX_API_TOKENS_PER_USER} API tokens; revoke one first`);
  return { token, record: ApiToken.build(row, { isNewRecord: false, raw: true }) };
}
