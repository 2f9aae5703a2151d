import crypto from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { OAuthError, type OAuthErrorCode } from '../errors';
import { findInputFlaw } from '../input-hygiene';

/** A client as the authorization server knows it, whichever way it became known. */
export interface OAuthClient {
  clientId: string;
  /** Chosen by the client and verified by nobody: shown to the user as a claim, with the redirect host. */
  name: string;
  redirectUris: string[];
}

const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;
const MAX_NAME_LENGTH = 100;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A redirect URI a client may register (RFC 8252, OAuth 2.1 7.5): absolute, without a fragment, and
 * https, or http to a loopback host (a native client's local listener), or a private-use scheme such as
 * `com.example.app:` (never javascript:, data:, file: or the like). The browser follows it, not the
 * service, so a loopback target is no server-side request.
 */
export function checkRedirectUri(raw: unknown, code: OAuthErrorCode = 'invalid_redirect_uri'): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_URI_LENGTH)
    throw new OAuthError(code, `redirect_uris must be URLs of at most ${MAX_URI_LENGTH} characters`);
  if (/[\p{Cc}\s]/u.test(raw))
    throw new OAuthError(code, 'a redirect URI must not contain spaces or control characters');
  if (raw.includes('#')) throw new OAuthError(code, `the redirect URI ${raw} must not contain a fragment`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OAuthError(code, `the redirect URI ${raw} is not an absolute URL`);
  }
  if (url.protocol === 'https:') return raw;
  if (url.protocol === 'http:') {
    if (LOOPBACK_HOSTS.has(url.hostname)) return raw;
    throw new OAuthError(code, `the redirect URI ${raw} must use https (http only to localhost or a loopback address)`);
  }
  if (/^[a-z][a-z0-9+-]*\.[a-z0-9+.-]+:$/.test(url.protocol)) return raw;
  throw new OAuthError(
    code,
    `the redirect URI ${raw} must use https, http to a loopback address, or a private-use scheme like com.example.app:`,
  );
}

function checkRedirectUris(raw: unknown, code: OAuthErrorCode): string[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_REDIRECT_URIS)
    throw new OAuthError(code, `redirect_uris must be an array of 1 to ${MAX_REDIRECT_URIS} URLs`);
  return raw.map((uri) => checkRedirectUri(uri, code));
}

function checkName(raw: unknown, fallback: string, code: OAuthErrorCode): string {
  if (raw === undefined || raw === null || raw === '') return fallback;
  if (typeof raw !== 'string') throw new OAuthError(code, 'client_name must be a string');
  // Shown on the consent page and as the token's label: one line, printable.
  const name = raw.replace(/[\p{Cc}\p{Cf}]/gu, ' ').trim();
  return name.length === 0 ? fallback : name.slice(0, MAX_NAME_LENGTH);
}

/** Clients authenticate with nothing at the token endpoint (public clients, PKCE). */
function checkAuthMethod(raw: unknown, code: OAuthErrorCode): void {
  if (raw !== undefined && raw !== 'none')
    throw new OAuthError(code, 'token_endpoint_auth_method must be "none": this server issues no client secrets');
}

/** Whether a client_id names a metadata document (draft-ietf-oauth-client-id-metadata-document) rather than a registration. */
export function isMetadataDocumentId(clientId: string): boolean {
  return /^https:\/\//i.test(clientId);
}

/** A client_id URL as the draft allows it: https, a path, no fragment, no credentials, no dot segments. */
export function parseClientIdUrl(clientId: string): URL {
  const bad = (why: string) => new OAuthError('invalid_client', `the client_id URL ${why}`);
  if (clientId.length > MAX_URI_LENGTH) throw bad(`is longer than ${MAX_URI_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw bad('is not a URL');
  }
  if (url.protocol !== 'https:') throw bad('must use https');
  if (url.hash || clientId.includes('#')) throw bad('must not contain a fragment');
  if (url.username || url.password) throw bad('must not contain credentials');
  if (url.pathname === '/' || url.pathname === '') throw bad('must have a path');
  if (/(^|\/)\.\.?(\/|$)/.test(clientId.replace(/^https:\/\/[^/]*/i, '')))
    throw bad('must not contain . or .. segments');
  return url;
}

/** Reads a client's metadata document; the guarded fetch in production, a stand-in in tests. */
export type FetchClientDocument = (url: URL) => Promise<unknown>;

/**
 * The clients the authorization server knows: a client_id that is an https URL is a Client ID
 * Metadata Document, read at each authorization (nothing is cached, so a client that changes its
 * document is seen at once); any other client_id is one `/oauth/register` handed out.
 */
export class ClientDirectory {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly fetchDocument: FetchClientDocument,
  ) {}

  /** The client, or invalid_client saying why it is not known. */
  async find(clientId: string): Promise<OAuthClient> {
    if (isMetadataDocumentId(clientId)) return this.fromDocument(clientId);
    if (clientId.length > 100) throw new OAuthError('invalid_client', 'unknown client_id');
    const [row] = await this.sequelize.query<{ client_id: string; client_name: string; redirect_uris: string[] }>(
      'SELECT client_id, client_name, redirect_uris FROM oauth_clients WHERE client_id = $1',
      { bind: [clientId], type: QueryTypes.SELECT },
    );
    if (!row) throw new OAuthError('invalid_client', 'unknown client_id: register at /oauth/register first');
    return { clientId: row.client_id, name: row.client_name, redirectUris: row.redirect_uris };
  }

  private async fromDocument(clientId: string): Promise<OAuthClient> {
    const url = parseClientIdUrl(clientId);
    const document = await this.fetchDocument(url);
    if (typeof document !== 'object' || document === null || Array.isArray(document))
      throw new OAuthError('invalid_client', 'client metadata document: not a JSON object');
    // The document is the client's text: what the request edge refuses, it refuses too.
    const flaw = findInputFlaw(document);
    if (flaw) throw new OAuthError('invalid_client', `client metadata document: ${flaw.path} ${flaw.problem}`);
    const fields = document as Record<string, unknown>;
    if (fields.client_id !== clientId)
      throw new OAuthError('invalid_client', 'client metadata document: its client_id is not the URL it was read from');
    checkAuthMethod(fields.token_endpoint_auth_method, 'invalid_client');
    return {
      clientId,
      name: checkName(fields.client_name, url.host, 'invalid_client'),
      redirectUris: checkRedirectUris(fields.redirect_uris, 'invalid_client'),
    };
  }

  /** RFC 7591 registration of a public client; answers the registration as RFC 7591 3.2.1 shows it. */
  async register(body: unknown): Promise<Record<string, unknown>> {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new OAuthError('invalid_client_metadata', 'the registration must be a JSON object');
    const fields = body as Record<string, unknown>;
    const redirectUris = checkRedirectUris(fields.redirect_uris, 'invalid_redirect_uri');
    checkAuthMethod(fields.token_endpoint_auth_method, 'invalid_client_metadata');
    const grants = fields.grant_types ?? ['authorization_code'];
    if (!Array.isArray(grants) || !grants.includes('authorization_code'))
      throw new OAuthError('invalid_client_metadata', 'grant_types must include authorization_code');
    const responses = fields.response_types ?? ['code'];
    if (!Array.isArray(responses) || !responses.includes('code'))
      throw new OAuthError('invalid_client_metadata', 'response_types must include code');
    const name = checkName(
      fields.client_name,
      new URL(redirectUris[0]).host || 'MCP client',
      'invalid_client_metadata',
    );
    const clientId = `mcp_${crypto.randomBytes(18).toString('base64url')}`;
    const [[row]] = (await this.sequelize.query(
      `INSERT INTO oauth_clients (client_id, client_name, redirect_uris) VALUES ($1, $2, $3::text[]) RETURNING created_at`,
      { bind: [clientId, name, redirectUris] },
    )) as [{ created_at: Date }[], unknown];
    return {
      client_id: clientId,
      client_id_issued_at: Math.floor(row.created_at.getTime() / 1000),
      client_name: name,
      redirect_uris: redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
}
