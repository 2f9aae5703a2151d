import { createApiToken } from '../../commands/create-api-token';
import { TOKEN_SCOPES } from '../../domain/token-scopes';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findUser } from '../present';

export interface TokenCreateOptions {
  username: string;
  label?: string;
  /** The token's limits (docs/tokens.md); each absent means none. */
  scope?: string[];
  expiresIn?: number;
  circuit?: string[];
  maxCreditsPerDay?: number;
}

/** Creates an API token for an existing user, optionally limited; the token is shown only here. */
export async function tokenCreate(io: CliIo, options: TokenCreateOptions) {
  return withDatabase(io, async () => {
    const user = await findUser(options.username);
    const { token, record } = await createApiToken(user, options.label ?? 'cli', {
      scopes: options.scope ?? null,
      expiresAt: options.expiresIn === undefined ? null : new Date(Date.now() + options.expiresIn),
      circuitUids: options.circuit ?? null,
      maxCreditsPerDay: options.maxCreditsPerDay ?? null,
    });
    const limited =
      options.scope || options.expiresIn !== undefined || options.circuit || options.maxCreditsPerDay !== undefined;
    if (!limited) return { token };
    return {
      token,
      uid: record.uid,
      scopes: record.scopes ?? [...TOKEN_SCOPES],
      expires_at: record.expires_at ?? null,
      circuit_uids: record.circuit_uids ?? null,
      max_credits_per_day:
        record.max_credits_per_day === null || record.max_credits_per_day === undefined
          ? null
          : Number(record.max_credits_per_day),
    };
  });
}
