import { ApiToken, User } from '../models';
import { hashToken } from './tokens';
import { preparedQuery } from '../db/prepared';
import { tokenCacheFor, type CachedAuthentication } from './token-cache';

export type Authentication =
  | { kind: 'anonymous' }
  | { kind: 'invalid' }
  | { kind: 'token'; user: User; /** Set for a bearer token (not for a signed URL's reader): open streams re-check it. */ tokenHash?: string };

const TOUCH_INTERVAL_MS = 60_000;

/** Token and user in one round trip: this runs on every authenticated request the cache cannot answer. */
async function readToken(tokenHash: string): Promise<CachedAuthentication | null> {
  const [row] = await preparedQuery<Record<string, unknown>>(
    User.sequelize!,
    `SELECT u.*, t.uid AS token_uid, t.label AS token_label, t.last_used_at AS token_last_used_at, t.created_at AS token_created_at
       FROM api_tokens t JOIN users u ON u.uid = t.user_uid
      WHERE t.token_hash = $1 AND t.revoked_at IS NULL`,
    [tokenHash],
  );
  if (!row) return null;
  const { token_uid, token_label, token_last_used_at, token_created_at, ...userRow } = row;
  return {
    userRow,
    token: { uid: token_uid as string, label: token_label as string | null, last_used_at: token_last_used_at as Date | null, created_at: token_created_at as Date },
  };
}

/** Resolves an `Authorization: Bearer` header to its user; a bad header is remembered, not thrown. */
export async function authenticate(header: string | undefined): Promise<Authentication> {
  if (!header) return { kind: 'anonymous' };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return { kind: 'invalid' };
  const tokenHash = hashToken(match[1]);
  const cache = tokenCacheFor(User.sequelize!);
  let found = cache.get(tokenHash);
  if (!found) {
    const begunAt = cache.begin();
    const read = await readToken(tokenHash);
    if (!read) return { kind: 'invalid' };
    cache.set(tokenHash, read.userRow.uid as string, read, begunAt);
    found = read;
  }
  // Built per request: resolvers may treat the viewer as their own object.
  const user = User.build({ ...found.userRow } as never, { isNewRecord: false, raw: true });
  // last_used_at is shown in settings; writing it on every request would cost a write per read.
  if (!found.token.last_used_at || Date.now() - found.token.last_used_at.getTime() > TOUCH_INTERVAL_MS) {
    found.token.last_used_at = new Date();
    await ApiToken.update({ last_used_at: found.token.last_used_at }, { where: { uid: found.token.uid }, hooks: false });
  }
  return { kind: 'token', user, tokenHash };
}
