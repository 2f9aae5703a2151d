import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * Runs `insert`, an `INSERT … SELECT … WHERE (SELECT count(*) …) < limit RETURNING *`, under a
 * transaction-scoped advisory lock named by `lockKey` (one per owner and kind of row). The lock
 * serialises one owner's creates, and the count is a new statement after it is taken, so it sees
 * every row a concurrent create committed: the limit is exact under any concurrency (a count in the
 * same statement as the lock would read the snapshot taken before the wait). Other owners never wait.
 * Resolves to the inserted row, or null when the limit is already reached.
 */
export async function insertWithinLimit<T extends object>(
  sequelize: Sequelize,
  lockKey: string,
  insert: string,
  bind: unknown[],
): Promise<T | null> {
  return sequelize.transaction(async (transaction) => {
    await sequelize.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', {
      bind: [lockKey],
      transaction,
      type: QueryTypes.SELECT,
    });
    const [row] = await sequelize.query<T>(insert, { bind, transaction, type: QueryTypes.SELECT });
    return row ?? null;
  });
}
