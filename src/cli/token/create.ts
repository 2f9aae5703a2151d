import type { Command } from 'commander';
import { createApiToken } from '../../commands/create-api-token';
import { TOKEN_SCOPES } from '../../auth/token-grant';
import { withDatabase } from '../database';
import { findUser } from '../present';
import { printJson } from '../output';
import { collect, duration, positiveInteger } from '../options';

export interface TokenCreateOptions {
  username: string;
  label?: string;
  /** DESIGN §12 limits; each absent means none. */
  scope?: string[];
  expiresIn?: number;
  circuit?: string[];
  maxCreditsPerDay?: number;
}

/** Creates an API token for an existing user, optionally limited; the token is shown only here. */
export async function tokenCreate(options: TokenCreateOptions) {
  return withDatabase(async () => {
    const user = await findUser(options.username);
    const { token, record } = await createApiToken(user, options.label ?? 'cli', {
      scopes: options.scope ?? null,
      expiresAt: options.expiresIn === undefined ? null : new Date(Date.now() + options.expiresIn),
      circuitUids: options.circuit ?? null,
      maxCreditsPerDay: options.maxCreditsPerDay ?? null,
    });
    const limited = options.scope || options.expiresIn !== undefined || options.circuit || options.maxCreditsPerDay !== undefined;
    if (!limited) return { token };
    return {
      token,
      uid: record.uid,
      scopes: record.scopes ?? [...TOKEN_SCOPES],
      expires_at: record.expires_at ?? null,
      circuit_uids: record.circuit_uids ?? null,
      max_credits_per_day: record.max_credits_per_day === null || record.max_credits_per_day === undefined ? null : Number(record.max_credits_per_day),
    };
  });
}

export function register(parent: Command): void {
  parent
    .command('create')
    .description('create an API token for a user (printed once), optionally limited (DESIGN §12)')
    .requiredOption('--username <username>', 'the owner of the token')
    .option('--label <label>', 'a label to recognise the token by in /settings', 'cli')
    .option('--scope <scope>', `what it may do, repeatable: ${TOKEN_SCOPES.join(', ')} (default all)`, collect)
    .option('--expires-in <duration>', 'when it stops working, e.g. 30d, 12h, 90m (default never)', duration)
    .option('--circuit <uid>', 'the only circuit(s) it may run, repeatable (default any)', collect)
    .option('--max-credits-per-day <n>', "credits its runs may take per UTC day (default no cap)", positiveInteger)
    .action(async (options: TokenCreateOptions) => printJson(await tokenCreate(options)));
}
