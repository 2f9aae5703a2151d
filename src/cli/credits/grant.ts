import type { Command } from 'commander';
import { grantCredits } from '../../credits/grants';
import { withDatabase } from '../database';
import { positiveInteger } from '../options';
import { printJson } from '../output';

export interface CreditsGrantOptions { username: string; amount: number }

/** Adds credits to a user's balance with its ledger row (safe beside running queries). */
export async function creditsGrant(options: CreditsGrantOptions) {
  return withDatabase(async ({ sequelize }) => {
    const grant = await grantCredits(sequelize, { username: options.username }, options.amount);
    return { username: grant.username, credits: grant.balanceAfter };
  });
}

export function register(parent: Command): void {
  parent
    .command('grant')
    .description("add credits to a user's balance (written to the ledger as a grant)")
    .requiredOption('--username <username>', 'the user to credit')
    .requiredOption('--amount <n>', 'credits to add (a whole number of at least 1)', positiveInteger)
    .action(async (options: CreditsGrantOptions) => printJson(await creditsGrant(options)));
}
