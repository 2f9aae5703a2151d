import { QueryTypes, type Sequelize } from 'sequelize';

/** Which rows of a table are overdue, and what claiming one of them marks on it. */
export interface OverdueClaim {
  table: string;
  /** The key column: what is claimed by and returned (`uid` when absent). */
  key?: string;
  /** What makes a row overdue: a condition over the table's columns; its `$n` are the caller's parameters. */
  overdue: string;
  /** Which are claimed first (the longest overdue). */
  orderBy: string;
  /** What claiming a row sets, e.g. `enqueued_at = now()`, so that the next sweep passes it by for a while. */
  set: string;
}

/**
 * THE claim-overdue statement: at most `limit` overdue rows, locked with SKIP LOCKED (two sweepers at
 * once claim different rows and neither waits), marked (`set`) and returned, in one statement.
 * `limit` is the placeholder of the batch size; `returning` what the statement returns (the key by default).
 */
export function claimOverdueSql(claim: OverdueClaim, limit: string, returning = claim.key ?? 'uid'): string {
  const key = claim.key ?? 'uid';
  return `UPDATE ${claim.table} SET ${claim.set}
      WHERE ${key} IN (
        SELECT ${key} FROM ${claim.table}
         WHERE ${claim.overdue}
         ORDER BY ${claim.orderBy}
         LIMIT ${limit}
         FOR UPDATE SKIP LOCKED)
      RETURNING ${returning}`;
}

/**
 * Claims at most `limit` overdue rows (claimOverdueSql) and answers their keys. `bind`: the values of the
 * condition's `$1…`; the limit is bound after them.
 */
export async function claimOverdue(
  sequelize: Sequelize,
  claim: OverdueClaim,
  bind: unknown[],
  limit: number,
): Promise<string[]> {
  const key = claim.key ?? 'uid';
  const sql = claimOverdueSql(claim, `$${bind.length + 1}`);
  const rows = await sequelize.query<Record<string, string>>(sql, { bind: [...bind, limit], type: QueryTypes.SELECT });
  return rows.map((row) => row[key]);
}
