import type { ApiToken } from '../models';
import type { Sequelize } from 'sequelize';
import { TOKEN_SCOPES } from '../domain/token-scopes';
import { spentToday } from '../credits/token-spend';

/**
 * The API view of an API token, never its secret (only its hash is stored): GraphQL's ApiToken, REST's
 * token objects (schema/operations alias these fields in snake_case), the CLI's token list and /settings.
 * `spentToday`: the credits its runs held or were charged today (UTC), counted for a capped token only.
 */
export function apiTokenView(row: ApiToken, spentToday: number) {
  return {
    uid: row.uid,
    label: row.label,
    scopes: row.scopes ?? [...TOKEN_SCOPES],
    expiresAt: row.expires_at ?? null,
    circuitUids: row.circuit_uids ?? null,
    maxCreditsPerDay:
      row.max_credits_per_day === null || row.max_credits_per_day === undefined
        ? null
        : Number(row.max_credits_per_day),
    creditsSpentToday: spentToday,
    lastUsedAt: row.last_used_at ?? null,
    createdAt: row.created_at,
  };
}

export type ApiTokenView = ReturnType<typeof apiTokenView>;

/** Active tokens as their views, with what each capped one spent today, in one query. */
export async function apiTokenViews(sequelize: Sequelize, rows: ApiToken[]): Promise<ApiTokenView[]> {
  const spent = await spentToday(
    sequelize,
    rows.filter((row) => row.max_credits_per_day !== null && !row.revoked_at).map((row) => row.uid),
  );
  return rows.map((row) => apiTokenView(row, spent.get(row.uid) ?? 0));
}
