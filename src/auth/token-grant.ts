import type { Sequelize } from 'sequelize';
import { preparedQuery } from '../db/prepared';
import { grantOfRow, type TokenGrant } from '../domain/token-grant';

/**
 * The grant of a token by uid, for work done later on its behalf (a schedule's fires); a string
 * saying why not when the token has been revoked or has expired.
 */
export async function readTokenGrant(
  sequelize: Sequelize,
  tokenUid: string,
  now = new Date(),
): Promise<TokenGrant | string> {
  const [row] = await preparedQuery<{
    uid: string;
    scopes: string[] | null;
    expires_at: Date | null;
    circuit_uids: string[] | null;
    max_credits_per_day: string | null;
    revoked_at: Date | null;
  }>(
    sequelize,
    'SELECT uid, scopes, expires_at, circuit_uids, max_credits_per_day, revoked_at FROM api_tokens WHERE uid = $1',
    [tokenUid],
  );
  if (!row || row.revoked_at) return 'the API token it was created with has been revoked';
  if (row.expires_at && row.expires_at.getTime() <= now.getTime())
    return `the API token it was created with expired at ${row.expires_at.toISOString()}`;
  return grantOfRow(row);
}
