import { ledgerPage } from '../../credits/ledger';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findUser } from '../present';

export interface CreditsShowOptions {
  username: string;
  ledger: number;
}

/** A user's balance, what their runs in progress hold, and the latest ledger rows. */
export async function creditsShow(io: CliIo, options: CreditsShowOptions) {
  return withDatabase(io, async () => {
    const user = await findUser(options.username);
    const credits = user.creditBalance;
    const held = Number(user.credits_held);
    const { rows } = await ledgerPage(user.uid, { limit: Math.min(options.ledger, 1000), offset: 0 });
    return {
      username: user.username,
      credits,
      credits_held: held,
      available: Math.max(0, credits - held),
      ledger: rows.map((row) => ({
        uid: row.uid,
        kind: row.kind,
        ...(row.run_uid ? { run_uid: row.run_uid } : {}),
        amount: Number(row.amount),
        balance_after: Number(row.balance_after),
        created_at: row.created_at,
      })),
    };
  });
}
