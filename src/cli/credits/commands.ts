import type { Command } from 'commander';
import type { CliIo } from '../io';
import { implementation } from '../lazy';
import { positiveInteger, wholeNumber } from '../options';
import { printJson } from '../output';
import type * as GrantModule from './grant';
import type * as ShowModule from './show';

export function register(credits: Command, io: CliIo): void {
  credits
    .command('grant')
    .description("add credits to a user's balance (written to the ledger as a grant)")
    .requiredOption('--username <username>', 'the user to credit')
    .requiredOption('--amount <n>', 'credits to add (a whole number of at least 1)', positiveInteger)
    .action(async (options: GrantModule.CreditsGrantOptions) => {
      const { creditsGrant } = implementation(() => require('./grant') as typeof GrantModule);
      printJson(io, await creditsGrant(io, options));
    });
  credits
    .command('show')
    .description("show a user's balance, held credits and latest ledger rows")
    .requiredOption('--username <username>', 'the user')
    .option('--ledger <n>', 'how many ledger rows to show, newest first (max 1000)', wholeNumber, 10)
    .action(async (options: ShowModule.CreditsShowOptions) => {
      const { creditsShow } = implementation(() => require('./show') as typeof ShowModule);
      printJson(io, await creditsShow(io, options));
    });
}
