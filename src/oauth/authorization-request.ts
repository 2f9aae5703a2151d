import { OAuthError } from '../errors';
import { isTokenScope } from '../domain/token-grant';
import type { TokenScope } from '../domain/token-scopes';
import type { ClientDirectory, OAuthClient } from './clients';
import { MCP_SCOPES, type OAuthUrls } from './metadata';
import { S256_CHALLENGE } from './pkce';

/** An authorization request that passed every check: what the consent page shows and a code is bound to. */
export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  scopes: TokenScope[];
  resource: string | null;
}

/** A checked request as the session keeps it between the consent page and its answer. */
export type PendingAuthorization = AuthorizationRequest & { shownAt: number };

export type CheckedRequest =
  /** The client or its redirect URI cannot be trusted: told to the user, never sent to the redirect URI (RFC 6749 4.1.2.1). */
  | { kind: 'refused'; message: string }
  /** Anything else wrong: sent back to the client on its redirect URI. */
  | { kind: 'redirect'; to: string }
  | { kind: 'ok'; request: AuthorizationRequest };

const MAX_STATE_LENGTH = 1000;

/** The redirect URI with the answer's parameters added, `iss` among them (RFC 9207). */
export function redirectWith(redirectUri: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.append(name, value);
  return url.href;
}

export function errorRedirect(redirectUri: string, state: string | null, issuer: string, error: OAuthError): string {
  return redirectWith(redirectUri, {
    error: error.code,
    error_description: error.description,
    state,
    iss: issuer,
  });
}

/** A resource indicator (RFC 8707) names this server's one protected resource, or is absent. */
export function resourceMatches(resource: string, urls: OAuthUrls): boolean {
  return resource.replace(/\/$/, '') === urls.resource;
}

/** Checks `GET /oauth/authorize`'s parameters: the client and redirect URI first, then the rest. */
export async function checkAuthorizationRequest(
  query: Record<string, unknown>,
  clients: ClientDirectory,
  urls: OAuthUrls,
): Promise<CheckedRequest> {
  const param = (name: string): string | null | undefined => {
    const value = query[name];
    if (value === undefined || value === '') return null;
    return typeof value === 'string' ? value : undefined; // repeated: an error of its own
  };
  const clientId = param('client_id');
  if (!clientId) return { kind: 'refused', message: 'The request names no client (client_id is missing or repeated).' };
  let client: OAuthClient;
  try {
    client = await clients.find(clientId);
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    return { kind: 'refused', message: `The client cannot be used: ${error.description}.` };
  }
  const redirectUri = param('redirect_uri');
  if (!redirectUri) return { kind: 'refused', message: 'The request has no redirect_uri (or it is repeated).' };
  if (redirectUri.includes('#')) return { kind: 'refused', message: 'The redirect_uri must not contain a fragment.' };
  if (!client.redirectUris.includes(redirectUri))
    return { kind: 'refused', message: 'The redirect_uri is not one the client registered.' };

  const state = param('state');
  const back = (error: OAuthError): CheckedRequest => ({
    kind: 'redirect',
    to: errorRedirect(
      redirectUri,
      typeof state === 'string' ? state.slice(0, MAX_STATE_LENGTH) : null,
      urls.issuer,
      error,
    ),
  });
  if (state === undefined) return back(new OAuthError('invalid_request', 'state is repeated'));
  if (state !== null && state.length > MAX_STATE_LENGTH)
    return back(new OAuthError('invalid_request', `state is longer than ${MAX_STATE_LENGTH} characters`));
  if (param('response_type') !== 'code')
    return back(new OAuthError('unsupported_response_type', 'response_type must be code'));
  const challenge = param('code_challenge');
  if (!challenge) return back(new OAuthError('invalid_request', 'code_challenge is required (PKCE)'));
  if (param('code_challenge_method') !== 'S256')
    return back(new OAuthError('invalid_request', 'code_challenge_method must be S256 (plain is not accepted)'));
  if (!S256_CHALLENGE.test(challenge))
    return back(new OAuthError('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)'));

  const scope = param('scope');
  if (scope === undefined) return back(new OAuthError('invalid_request', 'scope is repeated'));
  const asked = scope === null ? [...MCP_SCOPES] : scope.split(' ').filter(Boolean);
  const unknown = asked.find((name) => !isTokenScope(name));
  if (unknown !== undefined || asked.length === 0)
    return back(new OAuthError('invalid_scope', `unknown scope "${String(unknown).slice(0, 40)}"`));

  const resource = param('resource');
  if (resource === undefined) return back(new OAuthError('invalid_target', 'only one resource may be named'));
  if (resource !== null && !resourceMatches(resource, urls))
    return back(new OAuthError('invalid_target', `the only resource here is ${urls.resource}`));

  return {
    kind: 'ok',
    request: {
      client,
      redirectUri,
      state,
      codeChallenge: challenge,
      scopes: [...new Set(asked)] as TokenScope[],
      resource,
    },
  };
}
