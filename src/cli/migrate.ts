import type { Command } from 'commander';
import { implementation } from './lazy';
import { printJson } from './output';
import type * as DatabaseModule from './database';

/** Applies pending migrations; prints the names applied (empty when up to date). */
export async function runMigrate() {
  const { withDatabase } = implementation(() => require('./database') as typeof DatabaseModule);
  return withDatabase(async ({ applied }) => ({ applied }));
}

export function register(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => printJson(await runMigrate()));
}
