import { QueryTypes, type Sequelize } from 'sequelize';

export interface Balance {
  credits: number;
  held: number;
}

/**
 * A user's balance as committed now. Authenticated viewers come from a cache that holds and charges
 * do not invalidate (migration 0012), so a balance shown or checked is read here, never off a viewer.
 */
export async function readBalance(sequelize: Sequelize, userUid: string): Promise<Balance> {
  const [row] = await sequelize.query<{ credits: string; credits_held: string }>(
    'SELECT credits, credits_held FROM users WHERE uid = $1',
    { bind: [userUid], type: QueryTypes.SELECT },
  );
  return { credits: Number(row?.credits ?? 0), held: Number(row?.credits_held ?? 0) };
}
