import { ApiToken, User } from '../models';
import { hashToken } from './tokens';
import { preparedQuery } from '../db/prepared';
import type { CachedAuthentication, TokenCache } from './token-cache';
import { grantOfRow } from '../domain/token-grant';

export type Authentication =
  | { kind: 'anonymous' }
  /** `message`: why the bearer token is refused (unknown, revoked or expired): a 401 everywhere. */
  | { kind: 'invalid'; message: string }
  /** `user.tokenGrant` holds the token's limits. */
  | {
      kind: 'token';
      user: User;
      /** Set for a bearer token, and for a signed URL's reader when a token signed it: open streams re-check it. */ tokenHash?: string;
    };

const INVALID = 'The bearer token is invalid or revoked';

const TOUCH_INTERVAL_MS = 60_000;

/** Token and user in one round trip: this runs on every authenticated request the cache cannot answer. */
async function readToken(tokenHash: string): Promise<CachedAuthentication | null> {
  const [row] = await preparedQuery<Record<string, unknown>>(
    User.sequelize!,
    `SELECT u.*, t.uid AS token_uid, t.label AS token_label, t.last_used_at AS token_last_used_at, t.created_at AS token_created_at,
            t.scopes AS token_scopes, t.expires_at AS token_expires_at, t.circuit_uids AS token_circuit_uids, t.max_credits_per_day AS token_max_credits_per_day
       FROM api_tokens t JOIN users u ON u.uid = t.user_uid
      WHERE t.token_hash = $1 AND t.revoked_at IS NULL`,
    [tokenHash],
  );
  if (!row) return null;
  const {
    token_uid,
    token_label,
    token_last_used_at,
    token_created_at,
    token_scopes,
    token_expires_at,
    token_circuit_uids,
    token_max_credits_per_day,
    ...userRow
  } = row;
  return {
    userRow,
    token: {
      uid: token_uid as string,
      label: token_label as string | null,
      last_used_at: token_last_used_at as Date | null,
      created_at: token_created_at as Date,
    },
    grant: grantOfRow({
      uid: token_uid as string,
      scopes: token_scopes as string[] | null,
      expires_at: token_expires_at as Date | null,
      circuit_uids: token_circuit_uids as string[] | null,
      max_credits_per_day: token_max_credits_per_day as string | null,
    }),
  };
}

/**
 * Resolves an `Authorization: Bearer` header to its user; a bad header is remembered, not thrown.
 * `tokens`: the API's token cache (ApiServices.tokenCache, src/graphql/context.ts); without one every token is read.
 */
export async function authenticate(
  tokens: TokenCache | undefined,
  header: string | undefined,
): Promise<Authentication> {
  if (!header) return { kind: 'anonymous' };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return { kind: 'invalid', message: INVALID };
  const tokenHash = hashToken(match[1]);
  let found = tokens?.get(tokenHash);
  if (!found) {
    const read = tokens
      ? await tokens.readOnce(tokenHash, async () => {
          const begunAt = tokens.begin();
          const row = await readToken(tokenHash);
          if (row) tokens.set(tokenHash, row.userRow.uid as string, row, begunAt);
          return row;
        })
      : await readToken(tokenHash);
    if (!read) return { kind: 'invalid', message: INVALID };
    found = read;
  }
  const { expiresAt } = found.grant;
  if (expiresAt && expiresAt.getTime() <= Date.now())
    return { kind: 'invalid', message: `The bearer token expired at ${expiresAt.toISOString()}` };
  // Built per request: resolvers may treat the viewer as their own object.
  const user = User.build({ ...found.userRow } as never, { isNewRecord: false, raw: true });
  user.tokenGrant = found.grant;
  // last_used_at is shown in settings; writing it on every request would cost a write per read.
  if (!found.token.last_used_at || Date.now() - found.token.last_used_at.getTime() > TOUCH_INTERVAL_MS) {
    found.token.last_used_at = new Date();
    await ApiToken.update(
      { last_used_at: found.token.last_used_at },
      { where: { uid: found.token.uid }, hooks: false },
    );
  }
  return { kind: 'token', user, tokenHash };
}
