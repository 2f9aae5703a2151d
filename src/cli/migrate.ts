import type { Command } from 'commander';
import { withDatabase } from './database';
import { printJson } from './output';

/** Applies pending migrations; prints the names applied (empty when up to date). */
export async function runMigrate() {
  return withDatabase(async ({ applied }) => ({ applied }));
}

export function register(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => printJson(await runMigrate()));
}
