import type { Command } from 'commander';
import type { CliIo } from '../io';
import { implementation } from '../lazy';
import { printJson } from '../output';
import { collect, duration, positiveInteger } from '../options';
import { TOKEN_SCOPES } from '../../domain/token-scopes';
import type * as CreateModule from './create';
import type * as ListModule from './list';
import type * as RevokeModule from './revoke';

export function register(token: Command, io: CliIo): void {
  token
    .command('create')
    .description(
      'create an API token for a user (printed once), optionally limited (scopes, expiry, circuits, a daily credit cap)',
    )
    .requiredOption('--username <username>', 'the owner of the token')
    .option('--label <label>', 'a label to recognise the token by in /settings', 'cli')
    .option('--scope <scope>', `what it may do, repeatable: ${TOKEN_SCOPES.join(', ')} (default all)`, collect)
    .option('--expires-in <duration>', 'when it stops working, e.g. 30d, 12h, 90m (default never)', duration)
    .option('--circuit <uid>', 'the only circuit(s) it may run, repeatable (default any)', collect)
    .option('--max-credits-per-day <n>', 'credits its runs may take per UTC day (default no cap)', positiveInteger)
    .action(async (options: CreateModule.TokenCreateOptions) => {
      const { tokenCreate } = implementation(() => require('./create') as typeof CreateModule);
      printJson(io, await tokenCreate(io, options));
    });
  token
    .command('list')
    .description("list a user's API tokens (uid, label, created, last used, limits); never the tokens themselves")
    .requiredOption('--username <username>', 'the owner of the tokens')
    .option('--all', 'include revoked tokens')
    .action(async (options: ListModule.TokenListOptions) => {
      const { tokenList } = implementation(() => require('./list') as typeof ListModule);
      printJson(io, await tokenList(io, options));
    });
  token
    .command('revoke')
    .description('revoke an API token (its uid is in `token list`)')
    .requiredOption('--username <username>', 'the owner of the token')
    .requiredOption('--uid <uid>', 'the token uid')
    .action(async (options: RevokeModule.TokenRevokeOptions) => {
      const { tokenRevoke } = implementation(() => require('./revoke') as typeof RevokeModule);
      printJson(io, await tokenRevoke(io, options));
    });
}
