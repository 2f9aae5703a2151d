import { ApiToken, User } from '../models';
import { hashToken } from './tokens';
import { preparedQuery } from '../db/prepared';

export type Authentication =
  | { kind: 'anonymous' }
  | { kind: 'invalid' }
  | { kind: 'token'; user: User; token: ApiToken };

const TOUCH_INTERVAL_MS = 60_000;

/** Resolves an `Authorization: Bearer` header to its user; a bad header is remembered, not thrown. */
export async function authenticate(header: string | undefined): Promise<Authentication> {
  if (!header) return { kind: 'anonymous' };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return { kind: 'invalid' };
  // One round trip for token and user: this runs on every authenticated request.
  const [row] = await preparedQuery<Record<string, unknown>>(
    User.sequelize!,
    `SELECT u.*, t.uid AS token_uid, t.label AS token_label, t.last_used_at AS token_last_used_at, t.created_at AS token_created_at
       FROM api_tokens t JOIN users u ON u.uid = t.user_uid
      WHERE t.token_hash = $1 AND t.revoked_at IS NULL`,
    [hashToken(match[1])],
  );
  if (!row) return { kind: 'invalid' };
  const { token_uid, token_label, token_last_used_at, token_created_at, ...userRow } = row;
  const user = User.build(userRow as never, { isNewRecord: false, raw: true });
  const token = ApiToken.build(
    { uid: token_uid, user_uid: user.uid, token_hash: '', label: token_label, last_used_at: token_last_used_at, created_at: token_created_at } as never,
    { isNewRecord: false, raw: true },
  );
  // last_used_at is shown in settings; writing it on every request would cost a write per read.
  if (!token.last_used_at || Date.now() - token.last_used_at.getTime() > TOUCH_INTERVAL_MS) {
    await ApiToken.update({ last_used_at: new Date() }, { where: { uid: token.uid } });
  }
  return { kind: 'token', user, token };
}
