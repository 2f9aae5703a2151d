import crypto from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { preparedQuery } from '../db/prepared';

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
function newSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

/** The user's signing secret, created on first read (concurrent first reads agree on one). */
export async function webhookSecretOf(sequelize: Sequelize, userUid: string): Promise<string> {
  const [row] = await preparedQuery<{ secret: string }>(
    sequelize,
    `WITH created AS (
       INSERT INTO webhook_secrets (user_uid, secret) VALUES ($1, $2) ON CONFLICT (user_uid) DO NOTHING RETURNING secret)
     SELECT secret FROM created UNION ALL SELECT secret FROM webhook_secrets WHERE user_uid = $1 LIMIT 1`,
    [userUid, newSecret()],
  );
  if (row) return row.secret;
  // A concurrent first read inserted it after this statement's snapshot was taken.
  const [again] = await preparedQuery<{ secret: string }>(
    sequelize,
    'SELECT secret FROM webhook_secrets WHERE user_uid = $1',
    [userUid],
  );
  return again.secret;
}

/** Replaces the user's secret; deliveries signed from now on (retries included) use the new one. */
export async function rotateWebhookSecret(sequelize: Sequelize, userUid: string): Promise<string> {
  const [row] = await preparedQuery<{ secret: string }>(
    sequelize,
    `INSERT INTO webhook_secrets (user_uid, secret) VALUES ($1, $2)
       ON CONFLICT (user_uid) DO UPDATE SET secret = EXCLUDED.secret, created_at = now()
     RETURNING secret`,
    [userUid, newSecret()],
  );
  return row.secret;
}
