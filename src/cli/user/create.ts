import type { Command } from 'commander';
import { createUser } from '../../commands/create-user';
import { createApiToken } from '../../commands/create-api-token';
import { withDatabase } from '../database';
import { wholeNumber } from '../options';
import { printJson } from '../output';

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
export async function userCreate(options: UserCreateOptions) {
  return withDatabase(async () => {
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

export function register(parent: Command): void {
  parent
    .command('create')
    .description('create a user and a first API token (printed once)')
    .requiredOption('--username <username>', 'lowercase letters, digits, "_" or "-"; 2-39 characters')
    .option('--password <password>', 'password for the /settings web sign-in (at least 8 characters)')
    .option('--name <name>', 'display name')
    .option('--bio <bio>', 'profile text')
    .option('--admin', 'make the user an admin (admin tokens see blob storage paths)')
    .option('--private', 'hide the profile from search')
    .option('--credits <n>', 'starting credit balance', wholeNumber)
    .action(async (options: UserCreateOptions) => printJson(await userCreate(options)));
}
