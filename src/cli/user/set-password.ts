import type { Command } from 'commander';
import { setPassword } from '../../commands/set-password';
import { withDatabase } from '../database';
import { findUser } from '../present';
import { printJson } from '../output';

export interface UserSetPasswordOptions { username: string; password: string }

/** Sets (or replaces) a user's /settings password; their open web sessions end. */
export async function userSetPassword(options: UserSetPasswordOptions) {
  return withDatabase(async () => {
    const user = await findUser(options.username);
    await setPassword(user, options.password);
    return { username: user.username, password_set: true };
  });
}

export function register(parent: Command): void {
  parent
    .command('set-password')
    .description('set the password a user signs in to /settings with (ends their web sessions)')
    .requiredOption('--username <username>', 'the user')
    .requiredOption('--password <password>', 'the new password (8 to 1024 characters)')
    .action(async (options: UserSetPasswordOptions) => printJson(await userSetPassword(options)));
}
