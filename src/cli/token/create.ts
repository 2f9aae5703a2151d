import { createApiToken } from '../../commands/create-api-token';
import { withDatabase } from '../database';
import { findUser } from '../present';

export interface TokenCreateOptions { username: string; label?: string }

/** Creates an API token for an existing user; the token is shown only here. */
export async function tokenCreate(options: TokenCreateOptions) {
  return withDatabase(async () => {
    const user = await findUser(options.username);
    const { token } = await createApiToken(user, options.label ?? 'cli');
    return { token };
  });
}
