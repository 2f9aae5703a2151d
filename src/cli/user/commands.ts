import type { Command } from 'commander';
import type { CliIo } from '../io';
import { implementation } from '../lazy';
import { positiveInteger, wholeNumber } from '../options';
import { printJson, printList } from '../output';
import type * as CreateModule from './create';
import type * as SetPasswordModule from './set-password';
import type * as ListModule from './list';
import type * as ShowModule from './show';

export function register(user: Command, io: CliIo): void {
  user
    .command('create')
    .description('create a user and a first API token (printed once)')
    .requiredOption('--username <username>', 'lowercase letters, digits, "_" or "-"; 2-39 characters')
    .option('--password <password>', 'password for the /settings web sign-in (at least 8 characters)')
    .option('--name <name>', 'display name')
    .option('--bio <bio>', 'profile text')
    .option('--admin', 'make the user an admin (admin tokens see blob storage paths)')
    .option('--private', 'hide the profile from search')
    .option('--credits <n>', 'starting credit balance', wholeNumber)
    .action(async (options: CreateModule.UserCreateOptions) => {
      const { userCreate } = implementation(() => require('./create') as typeof CreateModule);
      printJson(io, await userCreate(io, options));
    });
  user
    .command('set-password')
    .description('set the password a user signs in to /settings with (ends their web sessions)')
    .requiredOption('--username <username>', 'the user')
    .requiredOption('--password <password>', 'the new password (8 to 1024 characters)')
    .action(async (options: SetPasswordModule.UserSetPasswordOptions) => {
      const { userSetPassword } = implementation(() => require('./set-password') as typeof SetPasswordModule);
      printJson(io, await userSetPassword(io, options));
    });
  user
    .command('list')
    .description('list users, oldest first, with their balances (never password hashes or tokens)')
    .option('--search <text>', 'only usernames containing this text')
    .option('--admin', 'only admins')
    .option('--limit <n>', 'users per page (1-1000)', positiveInteger, 50)
    .option('--page <n>', '1-based page', positiveInteger, 1)
    .option('--table', 'print a table instead of JSON')
    .action(async (options: ListModule.UserListOptions & { table?: boolean }) => {
      const { userList, USER_COLUMNS } = implementation(() => require('./list') as typeof ListModule);
      printList(io, await userList(io, options), options, USER_COLUMNS);
    });
  user
    .command('show')
    .description(
      'show a user: profile, balance, held credits, and counts of circuits, runs by state, schedules and tokens',
    )
    .requiredOption('--username <username>', 'the user')
    .action(async (options: ShowModule.UserShowOptions) => {
      const { userShow } = implementation(() => require('./show') as typeof ShowModule);
      printJson(io, await userShow(io, options));
    });
}
