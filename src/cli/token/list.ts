import { ApiToken } from '../../models';
import { withDatabase } from '../database';
import { findUser } from '../present';

export interface TokenListOptions { username: string; all?: boolean }

/** A user's API tokens, newest first; never the tokens themselves (only their hashes are stored). */
export async function tokenList(options: TokenListOptions) {
  return withDatabase(async () => {
    const user = await findUser(options.username);
    const tokens = await ApiToken.findAll({
      where: { user_uid: user.uid, ...(options.all ? {} : { revoked_at: null }) },
      order: [['created_at', 'DESC'], ['uid', 'ASC']],
    });
    return tokens.map((token) => ({
      uid: token.uid,
      label: token.label,
      created_at: token.created_at,
      last_used_at: token.last_used_at ?? null,
      scopes: token.scopes ?? null,
      expires_at: token.expires_at ?? null,
      circuit_uids: token.circuit_uids ?? null,
      max_credits_per_day: token.max_credits_per_day === null || token.max_credits_per_day === undefined ? null : Number(token.max_credits_per_day),
      ...(options.all ? { revoked_at: token.revoked_at ?? null } : {}),
    }));
  });
}
