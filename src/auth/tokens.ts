import crypto from 'node:crypto';

export const TOKEN_PREFIX = 'cst_';

/** A new API token; only its hash is ever stored. */
export function generateToken(): string {
  return TOKEN_PREFIX + crypto.randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return crypto.createHash('sha256').update(token).digest('hex');
}
