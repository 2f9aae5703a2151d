import type { Command } from 'commander';
import { createApiToken } from '../../commands/create-api-token';
import { withDatabase } from '../database';
import { findUser } from '../present';
import { printJson } from '../output';

export interface TokenCreateOptions { username: string; label?: string }

/** Creates an API token for an existing user; the token is shown only here. */
export async function tokenCreate(options: TokenCreateOptions) {
  return withDatabase(async () => {
    const user = await findUser(options.username);
    const { token } = await createApiToken(user, options.label ?? 'cli');
    return { token };
  });
}

export function register(parent: Command): void {
  parent
    .command('create')
    .description('create an API token for a user (printed once)')
    .requiredOption('--username <username>', 'the owner of the token')
    .option('--label <label>', 'a label to recognise the token by in /settings', 'cli')
    .action(async (options: TokenCreateOptions) => printJson(await tokenCreate(options)));
}
