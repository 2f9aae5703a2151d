import type { Command } from 'commander';
import type { CliIo } from './io';
import { implementation } from './lazy';
import { printJson } from './output';
import type * as DatabaseModule from './database';

/** Applies pending migrations; prints the names applied (empty when up to date). */
export async function runMigrate(io: CliIo) {
  const { withDatabase } = implementation(() => require('./database') as typeof DatabaseModule);
  return withDatabase(io, async ({ applied }) => ({ applied }));
}

export function register(program: Command, io: CliIo): void {
  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => printJson(io, await runMigrate(io)));
}
