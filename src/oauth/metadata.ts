import { TOKEN_SCOPES, type TokenScope } from '../domain/token-scopes';

export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';
export const AUTHORIZATION_SERVER_WELL_KNOWN = '/.well-known/oauth-authorization-server';
export const OAUTH_PATHS = {
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  /** Where the authorize endpoint sends the browser: the session cookie is scoped to /settings. */
  consent: '/settings/oauth/authorize',
} as const;

/** What a client that asks for no scope is given: what MCP's tools/list and tools/call need. */
export const MCP_SCOPES: readonly TokenScope[] = ['circuits:read', 'runs:read', 'runs:write'];

/** How long an issued access token lives; there is no refresh token, the client authorizes again. */
export const ACCESS_TOKEN_TTL_SECONDS = 30 * 86_400;

/** The absolute URLs of the authorization server and of the one protected resource, from the public origin. */
export interface OAuthUrls {
  issuer: string;
  resource: string;
  resourceMetadata: string;
}

export function oauthUrls(publicUrl: string, resourcePath: string): OAuthUrls {
  const issuer = publicUrl.replace(/\/+$/, '');
  return {
    issuer,
    resource: `${issuer}${resourcePath}`,
    resourceMetadata: `${issuer}${PROTECTED_RESOURCE_WELL_KNOWN}${resourcePath}`,
  };
}

/** RFC 9728 protected resource metadata. */
export function protectedResourceMetadata(urls: OAuthUrls) {
  return {
    resource: urls.resource,
    authorization_servers: [urls.issuer],
    scopes_supported: MCP_SCOPES,
    bearer_methods_supported: ['header'],
    resource_name: 'Circuit Service MCP',
  };
}

/** RFC 8414 authorization server metadata. */
export function authorizationServerMetadata(urls: OAuthUrls) {
  return {
    issuer: urls.issuer,
    authorization_endpoint: `${urls.issuer}${OAUTH_PATHS.authorize}`,
    token_endpoint: `${urls.issuer}${OAUTH_PATHS.token}`,
    registration_endpoint: `${urls.issuer}${OAUTH_PATHS.register}`,
    scopes_supported: TOKEN_SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code'],
    token_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

/** The `WWW-Authenticate` of a 401 from the resource: where its metadata is, what to ask for, and why (RFC 6750 3). */
export function bearerChallenge(urls: OAuthUrls, invalidToken: boolean): string {
  const params = [`resource_metadata="${urls.resourceMetadata}"`, `scope="${MCP_SCOPES.join(' ')}"`];
  if (invalidToken) params.unshift('error="invalid_token"');
  return `Bearer ${params.join(', ')}`;
}
