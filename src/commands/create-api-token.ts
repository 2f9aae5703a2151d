import crypto from 'node:crypto';
import { ApiToken, User } from '../models';
import { badInput, conflict } from '../errors';
import { generateToken, hashToken } from '../auth/tokens';
import { insertWithinLimit } from '../db/count-limit';

/** Unrevoked tokens one user may hold: each is a credential to audit and a row every sign-in page lists. */
export const MAX_API_TOKENS_PER_USER = 100;

/** Creates a token and returns it in the clear: the only time it is ever shown. */
export async function createApiToken(user: User, label = ''): Promise<{ token: string; record: ApiToken }> {
  if (label.length > 100) throw badInput('label must be at most 100 characters', { field: 'label' });
  const token = generateToken();
  const row = await insertWithinLimit<ApiToken>(
    ApiToken.sequelize!,
    `api_tokens:${user.uid}`,
    `INSERT INTO api_tokens (uid, user_uid, token_hash, label)
     SELECT $1, $2, $3, $4
      WHERE (SELECT count(*) FROM api_tokens WHERE user_uid = $2 AND revoked_at IS NULL) < $5
     RETURNING *`,
    [crypto.randomUUID(), user.uid, hashToken(token), label, MAX_API_TOKENS_PER_USER],
  );
  if (!row) throw conflict(`You already have ${MAX_API_TOKENS_PER_USER} API tokens; revoke one first`);
  return { token, record: ApiToken.build(row, { isNewRecord: false, raw: true }) };
}
