import type { Command } from 'commander';
import type { CliIo } from '../io';
import { implementation } from '../lazy';
import { parseRoute } from '../options';
import { printJson } from '../output';
import type * as SetModule from './set';

export function register(alias: Command, io: CliIo): void {
  alias
    .command('set')
    .description('create a version alias or give it new routes; the routes it had go to its history')
    .requiredOption('--username <username>', 'the circuit owner')
    .requiredOption('--circuit <name>', 'circuit name')
    .requiredOption('--name <alias>', 'alias name (^[a-z][a-z0-9-]{0,31}$)')
    .requiredOption(
      '--route <version_uid=weight>',
      'a route, repeated for 1 to 5 routes; weights add up to 100',
      parseRoute,
    )
    .action(async (options: SetModule.AliasSetOptions) => {
      const { aliasSet } = implementation(() => require('./set') as typeof SetModule);
      printJson(io, await aliasSet(io, options));
    });
}
