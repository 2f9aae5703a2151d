import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { browserSuite } from './support/browser';
import { makeCircuit, makeUser } from './support/factories';
import { baseToolName } from '../src/mcp/tool-names';
import { ApiToken } from '../src/models';

const suite = browserSuite('browser.oauth-connect.test');
const { maybe } = suite;
const PASSWORD = 'oauth-browser-password';
const CLIENT_NAME = 'Connect Test Client';

/** The MCP client's local listener: the browser ends the authorization here (RFC 8252 loopback redirect). */
async function startCallback() {
  let arrived: (url: URL) => void;
  const next = new Promise<URL>((resolve) => (arrived = resolve));
  const server = http.createServer((req, res) => {
    arrived(new URL(req.url!, 'http://127.0.0.1'));
    res.writeHead(200, { 'content-type': 'text/plain' }).end('You may close this window.');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What an MCP client keeps between the steps of the flow, in memory. */
class MemoryProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  constructor(readonly redirectUrl: string) {}
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: CLIENT_NAME,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

maybe(
  'an MCP client connects by URL alone: discovery, registration, sign-in and consent in Chromium, code, token, tools/list; revoking it in /settings ends it',
  async () => {
    const owner = await makeUser({ password: PASSWORD });
    const { circuit } = await makeCircuit(owner);
    const callback = await startCallback();
    const mcpUrl = new URL(`${suite.t.url}/mcp`);
    const provider = new MemoryProvider(callback.url);
    const context = await suite.browser.newContext();
    try {
      // 1. With nothing but the URL: 401 → resource metadata → authorization server → registration → authorize URL.
      const first = new Client({ name: 'oauth-test', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
      await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
      expect(provider.info?.client_id).toMatch(/^mcp_/);
      const authorizationUrl = provider.authorizationUrl!;
      expect(authorizationUrl.href.startsWith(`${suite.t.url}/oauth/authorize?`)).toBe(true);
      expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authorizationUrl.searchParams.get('resource')).toBe(mcpUrl.href);

      // 2. The user signs in and consents in the browser, which is sent back to the client's listener.
      const page = await context.newPage();
      await page.goto(authorizationUrl.href);
      await page.waitForURL('**/settings/sign-in');
      await page.getByLabel('Username').fill(owner.username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('[data-oauth-consent]').waitFor();
      expect(await page.locator('[data-client-name]').textContent()).toBe(CLIENT_NAME);
      expect(await page.locator('[data-redirect-host]').textContent()).toBe(new URL(callback.url).host);
      expect(await page.locator('[data-scopes] code').allTextContents()).toEqual([
        'circuits:read',
        'runs:read',
        'runs:write',
      ]);
      await page.getByRole('button', { name: 'Approve' }).click();
      const back = await callback.next;
      expect(back.searchParams.get('iss')).toBe(suite.t.url);
      const code = back.searchParams.get('code')!;

      // 3. The code for a token, then tools/list with it.
      await transport.finishAuth(code);
      expect(provider.saved?.token_type).toBe('Bearer');
      const client = new Client({ name: 'oauth-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain(baseToolName(owner.username, circuit.name));
      await client.close();

      // 4. The token is an ordinary one in /settings, named after the client; revoking it there ends its access.
      const label = `${CLIENT_NAME} (MCP client)`;
      await page.goto(`${suite.t.url}/settings/tokens`);
      await page.getByRole('link', { name: `Revoke ${label}` }).click();
      await page.getByRole('button', { name: 'Revoke token' }).click();
      await page.getByText('Token revoked.').waitFor();
      expect(await ApiToken.count({ where: { user_uid: owner.user.uid, label, revoked_at: null } })).toBe(0);
      const after = await fetch(mcpUrl, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${provider.saved!.access_token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(after.status).toBe(401);
      expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    } finally {
      await context.close();
      await callback.close();
    }
  },
  60_000,
);
