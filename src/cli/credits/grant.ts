import { grantCredits } from '../../credits/grants';
import { withDatabase } from '../database';

export interface CreditsGrantOptions {
  username: string;
  amount: number;
}

/** Adds credits to a user's balance with its ledger row (safe beside running queries). */
export async function creditsGrant(options: CreditsGrantOptions) {
  return withDatabase(async ({ sequelize }) => {
    const grant = await grantCredits(sequelize, { username: options.username }, options.amount);
    return { username: grant.username, credits: grant.balanceAfter };
  });
}
