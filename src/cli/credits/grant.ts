import type { Command } from 'commander';
import { QueryTypes } from 'sequelize';
import { notFound } from '../../errors';
import { withDatabase } from '../database';
import { positiveInteger } from '../options';
import { printJson } from '../output';

export interface CreditsGrantOptions { username: string; amount: number }

/** Adds credits to a user's balance in one atomic UPDATE (safe beside running queries). */
export async function creditsGrant(options: CreditsGrantOptions) {
  return withDatabase(async ({ sequelize }) => {
    const rows = await sequelize.query<{ username: string; credits: string }>(
      'UPDATE users SET credits = credits + :amount, updated_at = now() WHERE username = :username RETURNING username, credits',
      { replacements: { amount: options.amount, username: options.username }, type: QueryTypes.SELECT },
    );
    if (rows.length === 0) throw notFound(`User ${options.username}`);
    return { username: rows[0].username, credits: Number(rows[0].credits) };
  });
}

export function register(parent: Command): void {
  parent
    .command('grant')
    .description("add credits to a user's balance")
    .requiredOption('--username <username>', 'the user to credit')
    .requiredOption('--amount <n>', 'credits to add (a whole number of at least 1)', positiveInteger)
    .action(async (options: CreditsGrantOptions) => printJson(await creditsGrant(options)));
}
