import { ApiToken, User } from '../models';
import { hashToken } from './tokens';

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
  const token = await ApiToken.findOne({ where: { token_hash: hashToken(match[1]), revoked_at: null } });
  if (!token) return { kind: 'invalid' };
  const user = await User.findByPk(token.user_uid);
  if (!user) return { kind: 'invalid' };
  // last_used_at is shown in settings; writing it on every request would cost a write per read.
  if (!token.last_used_at || Date.now() - token.last_used_at.getTime() > TOUCH_INTERVAL_MS) {
    await ApiToken.update({ last_used_at: new Date() }, { where: { uid: token.uid } });
  }
  return { kind: 'token', user, token };
}
