import type { Command } from 'commander';
import type { CliIo } from '../io';
import { implementation } from '../lazy';
import { printJson } from '../output';
import type * as PublishModule from './publish';
import type * as SetPrimaryModule from './set-primary';

export function register(version: Command, io: CliIo): void {
  version
    .command('publish')
    .description(
      'publish the next version of a circuit from a definition file (the format: README "Circuit definitions", or GET /api/v1/definition-schema.json)',
    )
    .requiredOption('--username <username>', 'the circuit owner')
    .requiredOption('--circuit <name>', 'circuit name')
    .requiredOption('--file <definition.json>', 'the version definition as JSON')
    .option('--primary', 'make it the primary version (the first version always is)')
    .action(async (options: PublishModule.VersionPublishOptions) => {
      const { versionPublish } = implementation(() => require('./publish') as typeof PublishModule);
      printJson(io, await versionPublish(io, options));
    });
  version
    .command('set-primary')
    .description('make a version the primary one (run when a query names no version or alias)')
    .requiredOption('--username <username>', 'the circuit owner')
    .requiredOption('--circuit <name>', 'circuit name')
    .requiredOption('--version <uid>', 'a version of that circuit')
    .action(async (options: SetPrimaryModule.VersionSetPrimaryOptions) => {
      const { versionSetPrimary } = implementation(() => require('./set-primary') as typeof SetPrimaryModule);
      printJson(io, await versionSetPrimary(io, options));
    });
}
