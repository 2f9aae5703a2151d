import crypto from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { AppError, OAuthError } from '../errors';
import { User } from '../models';
import { hashToken } from '../auth/tokens';
import { createApiToken } from '../commands/create-api-token';
import { revokeApiToken } from '../commands/revoke-api-token';
import type { AuthorizationRequest } from './authorization-request';
import { resourceMatches } from './authorization-request';
import { ACCESS_TOKEN_TTL_SECONDS, type OAuthUrls } from './metadata';
import { CODE_VERIFIER, verifierMatches } from './pkce';

/** How long a code may wait for its exchange: the client exchanges it the moment its redirect arrives. */
export const CODE_TTL_MS = 60_000;
/** Used and expired codes are kept this long, so a code presented again is recognised (and its token revoked). */
const CODE_KEPT_MS = 10 * 60_000;

interface CodeRow {
  client_id: string;
  client_name: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string | null;
  scopes: string[];
  user_uid: string;
  expires_at: Date;
  token_uid: string | null;
}

/** A new code for the request the user approved; only its hash is stored. */
export async function issueCode(sequelize: Sequelize, request: AuthorizationRequest, user: User): Promise<string> {
  const code = crypto.randomBytes(32).toString('base64url');
  await sequelize.query('DELETE FROM oauth_codes WHERE expires_at < $1', {
    bind: [new Date(Date.now() - CODE_KEPT_MS)],
  });
  await sequelize.query(
    `INSERT INTO oauth_codes (code_hash, client_id, client_name, redirect_uri, code_challenge, resource, scopes, user_uid, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7::text[], $8, $9)`,
    {
      bind: [
        hashToken(code),
        request.client.clientId,
        request.client.name,
        request.redirectUri,
        request.codeChallenge,
        request.resource,
        request.scopes,
        user.uid,
        new Date(Date.now() + CODE_TTL_MS),
      ],
    },
  );
  return code;
}

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

/** The label an issued token carries in /settings and `GET /users/tokens`. */
export function tokenLabel(clientName: string): string {
  return `${clientName.slice(0, 80)} (MCP client)`;
}

const grantError = (description: string) => new OAuthError('invalid_grant', description);

/**
 * The authorization_code grant (OAuth 2.1 4.1.3): the code is taken once, atomically, then checked
 * against the client, the redirect URI, the PKCE verifier and the resource; what it yields is an
 * ordinary API token of the user, limited to the approved scopes and expiring. A code presented a
 * second time is refused and the token it gave is revoked (the code may have leaked).
 */
export async function exchangeCode(
  sequelize: Sequelize,
  urls: OAuthUrls,
  params: Record<string, unknown>,
): Promise<TokenAnswer> {
  const field = (name: string): string => {
    const value = params[name];
    if (typeof value !== 'string' || value === '')
      throw new OAuthError('invalid_request', `${name} is required (once)`);
    return value;
  };
  const grantType = field('grant_type');
  if (grantType !== 'authorization_code')
    throw new OAuthError('unsupported_grant_type', 'the only grant type is authorization_code');
  const code = field('code');
  const clientId = field('client_id');
  const redirectUri = field('redirect_uri');
  const verifier = field('code_verifier');
  if (!CODE_VERIFIER.test(verifier))
    throw new OAuthError('invalid_request', 'code_verifier must be 43 to 128 characters of [A-Za-z0-9._~-]');
  const resource = params.resource;
  if (resource !== undefined && (typeof resource !== 'string' || !resourceMatches(resource, urls)))
    throw new OAuthError('invalid_target', `the only resource here is ${urls.resource}`);

  const codeHash = hashToken(code);
  const [row] = await sequelize.query<CodeRow>(
    'UPDATE oauth_codes SET used_at = now() WHERE code_hash = $1 AND used_at IS NULL RETURNING *',
    { bind: [codeHash], type: QueryTypes.SELECT },
  );
  if (!row) {
    const [used] = await sequelize.query<{ token_uid: string | null; user_uid: string }>(
      'SELECT token_uid, user_uid FROM oauth_codes WHERE code_hash = $1',
      { bind: [codeHash], type: QueryTypes.SELECT },
    );
    if (used?.token_uid) {
      await revokeApiToken({ uid: used.user_uid } as User, used.token_uid);
      throw grantError('the code was already used; the token it gave has been revoked');
    }
    throw grantError(used ? 'the code was already used' : 'unknown code');
  }
  if (row.expires_at.getTime() <= Date.now()) throw grantError('the code has expired');
  if (row.client_id !== clientId) throw grantError('the code was issued to another client');
  if (row.redirect_uri !== redirectUri) throw grantError('redirect_uri is not the one the code was issued for');
  if (!verifierMatches(verifier, row.code_challenge))
    throw grantError('code_verifier does not match the code_challenge');

  const user = await User.findByPk(row.user_uid);
  if (!user) throw grantError('the user who approved no longer exists');
  let created;
  try {
    created = await createApiToken(user, tokenLabel(row.client_name), {
      scopes: row.scopes,
      expiresAt: new Date(Date.now() + ACCESS_TOKEN_TTL_SECONDS * 1000),
    });
  } catch (error) {
    if (error instanceof AppError && error.code === 'Conflict') throw grantError(error.message);
    throw error;
  }
  await sequelize.query('UPDATE oauth_codes SET token_uid = $2 WHERE code_hash = $1', {
    bind: [codeHash, created.record.uid],
  });
  return {
    access_token: created.token,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_SECONDS,
    scope: (created.record.scopes ?? row.scopes).join(' '),
  };
}
