import { createUser } from '../../commands/create-user';
import { createApiToken } from '../../commands/create-api-token';
import { withDatabase } from '../database';
import type { CliIo } from '../io';

export interface UserCreateOptions {
  username: string;
  password?: string;
  name?: string;
  bio?: string;
  admin?: boolean;
  private?: boolean;
  credits?: number;
}

/** Creates a user and a first API token labelled "cli"; the token is shown only here. */
export async function userCreate(io: CliIo, options: UserCreateOptions) {
  return withDatabase(io, async () => {
    const user = await createUser({
      username: options.username,
      password: options.password,
      name: options.name,
      bio: options.bio,
      isAdmin: options.admin ?? false,
      isPrivate: options.private ?? false,
      credits: options.credits,
    });
    const { token } = await createApiToken(user, 'cli');
    return { uid: user.uid, username: user.username, token };
  });
}
