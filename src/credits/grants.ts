import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { badInput, notFound } from '../errors';

export interface Grant {
  userUid: string;
  username: string;
  amount: number;
  balanceAfter: number;
}

/** The largest balance a user may have: amounts stay exact in every client (GraphQL Int is 32-bit). */
export const MAX_BALANCE = 1_000_000_000;

export function checkGrantAmount(amount: number, field = 'amount'): void {
  if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_BALANCE) {
    throw badInput(`${field} must be a whole number from 1 to ${MAX_BALANCE}`, { field });
  }
}

/**
 * Adds credits to a user's balance and writes the grant's ledger row, in one statement (safe beside
 * running queries and charges: the balance row is locked by the update).
 */
export async function grantCredits(
  sequelize: Sequelize,
  user: { uid: string } | { username: string },
  amount: number,
  transaction?: Transaction,
): Promise<Grant> {
  checkGrantAmount(amount);
  const byUid = 'uid' in user;
  const rows = await sequelize.query<{ uid: string; username: string; amount: string; balance_after: string }>(
    `WITH granted AS (
       UPDATE users SET credits = credits + :amount, updated_at = now()
        WHERE ${byUid ? 'uid = :key' : 'username = :key'} AND credits + :amount <= :max
        RETURNING uid, username, credits)
     INSERT INTO credit_ledger (user_uid, kind, amount, balance_after)
       SELECT uid, 'grant', :amount, credits FROM granted
     RETURNING user_uid AS uid, (SELECT username FROM granted) AS username, amount, balance_after`,
    {
      replacements: { amount, max: MAX_BALANCE, key: byUid ? user.uid : user.username },
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  if (rows.length === 0) {
    const exists = await sequelize.query(`SELECT 1 FROM users WHERE ${byUid ? 'uid' : 'username'} = :key`, {
      replacements: { key: byUid ? user.uid : user.username },
      type: QueryTypes.SELECT,
      transaction,
    });
    if (exists.length === 0) throw notFound(`User ${byUid ? user.uid : user.username}`);
    throw badInput(`a balance may be at most ${MAX_BALANCE} credits`, { field: 'amount' });
  }
  const row = rows[0];
  return {
    userUid: row.uid,
    username: row.username,
    amount: Number(row.amount),
    balanceAfter: Number(row.balance_after),
  };
}
