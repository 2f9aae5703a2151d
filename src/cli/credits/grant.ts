import { grantCredits } from '../../credits/grants';
import { withDatabase } from '../database';
import type { CliIo } from '../io';

export interface CreditsGrantOptions {
  username: string;
  amount: number;
}

/** Adds credits to a user's balance with its ledger row (safe beside running queries). */
export async function creditsGrant(io: CliIo, options: CreditsGrantOptions) {
  return withDatabase(io, async ({ sequelize }) => {
    const grant = await grantCredits(sequelize, { username: options.username }, options.amount);
    return { username: grant.username, credits: grant.balanceAfter };
  });
}
