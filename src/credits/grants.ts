import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { badInput, notFound } from '../errors';

export interface Grant { userUid: string; username: string; amount: number; balanceAfter: number }

/** The most credits one grant may add (keeps balances far inside bigint and JavaScript's safe integers). */
export const MAX_GRANT = 1_000_000_000_000;

export function checkGrantAmount(amount: number, field = 'amount'): void {
  if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_GRANT) {
    throw badInput(`${field} must be a whole number from 1 to ${MAX_GRANT}`, { field });
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
        WHERE ${byUid ? 'uid = :key' : 'username = :key'}
        RETURNING uid, username, credits)
     INSERT INTO credit_ledger (user_uid, kind, amount, balance_after)
       SELECT uid, 'grant', :amount, credits FROM granted
     RETURNING user_uid AS uid, (SELECT username FROM granted) AS username, amount, balance_after`,
    { replacements: { amount, key: byUid ? user.uid : user.username }, type: QueryTypes.SELECT, transaction },
  );
  if (rows.length === 0) throw notFound(`User ${byUid ? user.uid : user.username}`);
  const row = rows[0];
  return { userUid: row.uid, username: row.username, amount: Number(row.amount), balanceAfter: Number(row.balance_after) };
}
