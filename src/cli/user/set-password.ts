import { setPassword } from '../../commands/set-password';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findUser } from '../present';

export interface UserSetPasswordOptions {
  username: string;
  password: string;
}

/** Sets (or replaces) a user's /settings password; their open web sessions end. */
export async function userSetPassword(io: CliIo, options: UserSetPasswordOptions) {
  return withDatabase(io, async () => {
    const user = await findUser(options.username);
    await setPassword(user, options.password);
    return { username: user.username, password_set: true };
  });
}
