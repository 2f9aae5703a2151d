import { ApiToken, User } from '../models';
import { badInput } from '../errors';
import { generateToken, hashToken } from '../auth/tokens';

/** Creates a token and returns it in the clear: the only time it is ever shown. */
export async function createApiToken(user: User, label = ''): Promise<{ token: string; record: ApiToken }> {
  if (label.length > 100) throw badInput('label must be at most 100 characters', { field: 'label' });
  const token = generateToken();
  const record = await ApiToken.create({ user_uid: user.uid, token_hash: hashToken(token), label });
  return { token, record };
}
