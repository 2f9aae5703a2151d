import type { Command } from 'commander';
import type { CliIo } from '../io';
import { implementation } from '../lazy';
import { positiveInteger, usernameFilter } from '../options';
import { printJson, printList } from '../output';
import type * as CreateModule from './create';
import type * as ListModule from './list';

export function register(circuit: Command, io: CliIo): void {
  circuit
    .command('create')
    .description('create a circuit owned by a user')
    .requiredOption('--username <username>', 'the owner')
    .requiredOption('--name <name>', 'circuit name, unique per owner')
    .option('--description <text>', 'short description')
    .option('--private', 'only the owner sees and runs it')
    .option('--protected', 'the circuit object, versions and explain need the owner token')
    .action(async (options: CreateModule.CircuitCreateOptions) => {
      const { circuitCreate } = implementation(() => require('./create') as typeof CreateModule);
      printJson(io, await circuitCreate(io, options));
    });
  usernameFilter(circuit.command('list'), "only this user's circuits")
    .description('list circuits, newest first, in the REST shape (private ones too)')
    .option('--limit <n>', 'circuits per page (1-1000)', positiveInteger, 50)
    .option('--page <n>', '1-based page', positiveInteger, 1)
    .option('--table', 'print a table instead of JSON')
    .action(async (options: ListModule.CircuitListOptions & { table?: boolean }) => {
      const { circuitList, CIRCUIT_COLUMNS } = implementation(() => require('./list') as typeof ListModule);
      printList(io, await circuitList(io, options), options, CIRCUIT_COLUMNS);
    });
}
