/** What a token may do; every scope when a token names none. */
import { TOKEN_SCOPES, type TokenScope } from './token-scopes';

export function isTokenScope(value: unknown): value is TokenScope {
  return typeof value === 'string' && (TOKEN_SCOPES as readonly string[]).includes(value);
}

/**
 * The limits of the API token a request came with. Only requests authenticated by a token carry one;
 * a session (cookie) or password sign-in, and the service acting for a user, have the user's full rights.
 */
export interface TokenGrant {
  tokenUid: string;
  /** null: every scope. */
  scopes: readonly TokenScope[] | null;
  expiresAt: Date | null;
  /** null: any circuit the user may run. */
  circuitUids: readonly string[] | null;
  /** Credits the token's runs may take per UTC day; null: no cap. */
  maxCreditsPerDay: number | null;
}

/** The grant of an api_tokens row (its columns as read from PostgreSQL). */
export function grantOfRow(row: {
  uid: string;
  scopes: string[] | null;
  expires_at: Date | null;
  circuit_uids: string[] | null;
  max_credits_per_day: string | number | null;
}): TokenGrant {
  return {
    tokenUid: row.uid,
    scopes: row.scopes ? row.scopes.filter(isTokenScope) : null,
    expiresAt: row.expires_at,
    circuitUids: row.circuit_uids,
    maxCreditsPerDay: row.max_credits_per_day === null ? null : Number(row.max_credits_per_day),
  };
}
