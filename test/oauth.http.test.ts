import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { useTestApp } from './support/app';
import { makeCircuit, makeUser, type TestUser } from './support/factories';
import { webBrowser } from './support/web-browser';
import { s256 } from '../src/oauth/pkce';
import { fetchClientMetadataDocument } from '../src/oauth/client-metadata-document';
import { ClientDirectory } from '../src/oauth/clients';
import { ApiToken } from '../src/models';

/**
 * The authorization server over real HTTP, with a scripted client and a scripted browser (fetch with
 * the session cookie): discovery, registration, consent, the code exchange, and every refusal.
 */
const t = useTestApp();
const PASSWORD = 'oauth-test-password';
const REDIRECT = 'http://127.0.0.1:9/callback';
const VERIFIER = 'v'.repeat(43) + '-good-verifier';
let owner: TestUser;
let clientId: string;

beforeAll(async () => {
  owner = await makeUser({ password: PASSWORD });
  await makeCircuit(owner);
  const registered = await post('/oauth/register', { client_name: 'Test Client', redirect_uris: [REDIRECT] });
  expect(registered.status).toBe(201);
  clientId = registered.body.client_id as string;
});

async function post(path: string, body: unknown) {
  const res = await fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function token(params: Record<string, string>) {
  const res = await fetch(`${t.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

function authorizeQuery(overrides: Record<string, string | null> = {}): string {
  const params: Record<string, string | null> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: s256(VERIFIER),
    code_challenge_method: 'S256',
    state: 'st-1',
    resource: `${t.url}/mcp`,
    ...overrides,
  };
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== null) query.set(name, value);
  return query.toString();
}

/** Signs in (once per browser), opens the consent page, answers it; the redirect to the client as a URL. */
async function consent(
  browser: ReturnType<typeof webBrowser>,
  query: string,
  decision: 'approve' | 'deny' = 'approve',
): Promise<URL> {
  const page = await browser.request('GET', `/settings/oauth/authorize?${query}`);
  expect(page.status).toBe(200);
  expect(page.text).toContain('Test Client');
  expect(page.text).toContain('127.0.0.1:9');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
  const request = /name="request" value="([^"]+)"/.exec(page.text)![1];
  const answer = await browser.request(
    'POST',
    '/settings/oauth/authorize',
    new URLSearchParams({ _csrf: csrf, request, decision }),
  );
  expect(answer.status).toBe(303);
  return new URL(answer.location!);
}

let shared: ReturnType<typeof webBrowser> | undefined;
/** One signed-in browser for the file: sign-in attempts are rate limited per account. */
async function signedInBrowser() {
  if (shared) return shared;
  shared = webBrowser(t.url, '10.9.0.1');
  expect((await shared.signIn(owner.username, PASSWORD)).status).toBe(303);
  return shared;
}

async function code(query = authorizeQuery()): Promise<string> {
  const back = await consent(await signedInBrowser(), query);
  expect(back.searchParams.get('state')).toBe('st-1');
  expect(back.searchParams.get('iss')).toBe(t.url);
  return back.searchParams.get('code')!;
}

const exchange = (theCode: string, overrides: Record<string, string> = {}) =>
  token({
    grant_type: 'authorization_code',
    code: theCode,
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_verifier: VERIFIER,
    resource: `${t.url}/mcp`,
    ...overrides,
  });

describe('discovery', () => {
  test('/mcp answers 401 naming its resource metadata, which names this server as its authorization server', async () => {
    const res = await fetch(`${t.url}/mcp`, { method: 'POST' });
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate')!;
    expect(challenge).toContain(`resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp"`);
    const bad = await fetch(`${t.url}/mcp`, { method: 'POST', headers: { authorization: 'Bearer nope' } });
    expect(bad.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", resource_metadata=/);

    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const metadata = (await (await fetch(`${t.url}${path}`)).json()) as Record<string, unknown>;
      expect(metadata).toMatchObject({ resource: `${t.url}/mcp`, authorization_servers: [t.url] });
    }
    const server = (await (await fetch(`${t.url}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(server).toMatchObject({
      issuer: t.url,
      authorization_endpoint: `${t.url}/oauth/authorize`,
      token_endpoint: `${t.url}/oauth/token`,
      registration_endpoint: `${t.url}/oauth/register`,
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
    });
  });

  test('/oauth/authorize hands the browser to the consent page with the same query', async () => {
    const res = await fetch(`${t.url}/oauth/authorize?${authorizeQuery()}`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/settings/oauth/authorize?${authorizeQuery()}`);
  });
});

describe('the code flow', () => {
  test('sign-in first, consent, code, token: an ordinary API token named after the client that works on /mcp', async () => {
    const browser = webBrowser(t.url, '10.9.1.1');
    const first = await browser.request('GET', `/settings/oauth/authorize?${authorizeQuery()}`);
    expect(first.status).toBe(303);
    expect(first.location).toBe('/settings/sign-in');
    const csrf = await browser.csrf('/settings/sign-in');
    const signIn = await browser.request(
      'POST',
      '/settings/sign-in',
      new URLSearchParams({ _csrf: csrf, username: owner.username, password: PASSWORD }),
    );
    expect(signIn.location).toBe(`/settings/oauth/authorize?${authorizeQuery()}`);
    const back = await consent(browser, authorizeQuery());
    const answer = await exchange(back.searchParams.get('code')!);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toMatchObject({ token_type: 'Bearer', scope: 'runs:read runs:write circuits:read' });
    const row = await ApiToken.findOne({ where: { user_uid: owner.user.uid, label: 'Test Client (MCP client)' } });
    expect(row!.scopes).toEqual(['runs:read', 'runs:write', 'circuits:read']);
    expect(row!.expires_at!.getTime()).toBeGreaterThan(Date.now() + 29 * 86_400_000);

    const listed = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${answer.body.access_token as string}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(listed.status).toBe(200);
  });

  test('consent denied: the client gets error=access_denied with its state', async () => {
    const back = await consent(await signedInBrowser(), authorizeQuery(), 'deny');
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st-1');
    expect(back.searchParams.get('code')).toBeNull();
  });

  test('a consent form without the CSRF token changes nothing', async () => {
    const browser = await signedInBrowser();
    const page = await browser.request('GET', `/settings/oauth/authorize?${authorizeQuery()}`);
    const request = /name="request" value="([^"]+)"/.exec(page.text)![1];
    const res = await browser.request(
      'POST',
      '/settings/oauth/authorize',
      new URLSearchParams({ request, decision: 'approve' }),
    );
    expect(res.status).toBe(403);
  });
});

describe('the token endpoint refuses', () => {
  test('a wrong code_verifier, and the code is spent', async () => {
    const theCode = await code();
    const wrong = await exchange(theCode, { code_verifier: 'w'.repeat(43) });
    expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await exchange(theCode)).body.error).toBe('invalid_grant');
  });

  test('a reused code, revoking the token the first use gave', async () => {
    const theCode = await code();
    const first = await exchange(theCode);
    expect(first.status).toBe(200);
    const again = await exchange(theCode);
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(again.body.error_description).toMatch(/already used.*revoked/);
    const mcp = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${first.body.access_token as string}` },
    });
    expect(mcp.status).toBe(401);
  });

  test('a redirect_uri other than the code was issued for', async () => {
    const answer = await exchange(await code(), { redirect_uri: 'http://127.0.0.1:9/other' });
    expect(answer).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  test('another client, an unknown code, a missing verifier, a wrong grant type, a foreign resource, a JSON body', async () => {
    const other = await post('/oauth/register', { redirect_uris: [REDIRECT] });
    expect((await exchange(await code(), { client_id: other.body.client_id as string })).body.error).toBe(
      'invalid_grant',
    );
    expect(await exchange('not-a-code')).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await exchange(await code(), { code_verifier: '' })).toMatchObject({
      status: 400,
      body: { error: 'invalid_request' },
    });
    expect(await exchange('x', { grant_type: 'refresh_token' })).toMatchObject({
      status: 400,
      body: { error: 'unsupported_grant_type' },
    });
    expect(await exchange(await code(), { resource: 'https://elsewhere.example/mcp' })).toMatchObject({
      status: 400,
      body: { error: 'invalid_target' },
    });
    expect(await post('/oauth/token', { grant_type: 'authorization_code' })).toMatchObject({
      status: 400,
      body: { error: 'invalid_request' },
    });
  });
});

describe('the authorization request', () => {
  const open = async (query: string) => (await signedInBrowser()).request('GET', `/settings/oauth/authorize?${query}`);
  const errorOf = (res: { status: number; location: string | null }) => {
    expect(res.status).toBe(303);
    const url = new URL(res.location!);
    expect(`${url.origin}${url.pathname}`).toBe(REDIRECT);
    expect(url.searchParams.get('state')).toBe('st-1');
    return url.searchParams.get('error');
  };

  test('an unknown client or a redirect_uri it did not register is told to the user, never redirected', async () => {
    for (const query of [
      authorizeQuery({ client_id: 'mcp_unknown' }),
      authorizeQuery({ redirect_uri: 'http://127.0.0.1:9/elsewhere' }),
      authorizeQuery({ redirect_uri: `${REDIRECT}#fragment` }),
      authorizeQuery({ client_id: null }),
    ]) {
      const res = await open(query);
      expect(res.status).toBe(400);
      expect(res.text).toContain('Cannot connect this application');
    }
  });

  test('missing PKCE, plain PKCE, another response type, an unknown scope, a foreign resource: sent back to the client', async () => {
    expect(errorOf(await open(authorizeQuery({ code_challenge: null, code_challenge_method: null })))).toBe(
      'invalid_request',
    );
    expect(errorOf(await open(authorizeQuery({ code_challenge: VERIFIER, code_challenge_method: 'plain' })))).toBe(
      'invalid_request',
    );
    expect(errorOf(await open(authorizeQuery({ code_challenge_method: null })))).toBe('invalid_request');
    expect(errorOf(await open(authorizeQuery({ response_type: 'token' })))).toBe('unsupported_response_type');
    expect(errorOf(await open(authorizeQuery({ scope: 'runs:read everything' })))).toBe('invalid_scope');
    expect(errorOf(await open(authorizeQuery({ resource: 'https://elsewhere.example/mcp' })))).toBe('invalid_target');
  });

  test('a client whose metadata document is on a private address is refused', async () => {
    for (const id of ['https://127.0.0.1/client.json', 'https://10.0.0.8/client.json', 'https://[::1]/client.json']) {
      const res = await open(authorizeQuery({ client_id: id }));
      expect(res.status).toBe(400);
      expect(res.text).toContain('not a public address');
    }
    const http = await open(authorizeQuery({ client_id: 'http://client.example/client.json' }));
    expect(http.status).toBe(400);
  });
});

describe('registration refuses', () => {
  test('redirect URIs with a fragment, http to another host, javascript:, none at all; client secrets; non-JSON', async () => {
    for (const redirect_uris of [[`${REDIRECT}#x`], ['http://evil.example/cb'], ['javascript:alert(1)'], []]) {
      expect(await post('/oauth/register', { redirect_uris })).toMatchObject({
        status: 400,
        body: { error: 'invalid_redirect_uri' },
      });
    }
    expect(
      await post('/oauth/register', { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_client_metadata' } });
    const res = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_client_metadata');
    const malformed = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      body: '{',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: string }).error).toBe('invalid_request');
  });
});

describe('client metadata documents', () => {
  let server: http.Server;
  let base: string;
  const documents = new Map<string, string>();
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const body = documents.get(req.url!);
      if (req.url === '/moved') return res.writeHead(302, { location: '/client.json' }).end();
      if (body === undefined) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** The directory as the service builds it, but allowed to read this machine (no https here either). */
  const directory = () =>
    new ClientDirectory(t.app.services.sequelize, (url) =>
      fetchClientMetadataDocument(new URL(url.href.replace(/^https:\/\/client\.test/, base)), { allowPrivate: true }),
    );

  test('a valid document is the client; its client_id must be its own URL', async () => {
    const id = 'https://client.test/client.json';
    documents.set(
      '/client.json',
      JSON.stringify({ client_id: id, client_name: 'Doc Client', redirect_uris: [REDIRECT] }),
    );
    expect(await directory().find(id)).toEqual({ clientId: id, name: 'Doc Client', redirectUris: [REDIRECT] });
    documents.set('/other.json', JSON.stringify({ client_id: id, redirect_uris: [REDIRECT] }));
    await expect(directory().find('https://client.test/other.json')).rejects.toMatchObject({ code: 'invalid_client' });
  });

  test('an oversized document, a redirect, a non-JSON answer, a document with a secret method are refused', async () => {
    documents.set('/big.json', JSON.stringify({ client_id: 'https://client.test/big.json', pad: 'x'.repeat(6000) }));
    await expect(directory().find('https://client.test/big.json')).rejects.toThrow(/larger than 5120 bytes/);
    await expect(directory().find('https://client.test/moved')).rejects.toThrow(/HTTP 302/);
    documents.set('/text', 'hello');
    await expect(directory().find('https://client.test/text')).rejects.toThrow(/not a JSON document/);
    documents.set(
      '/secret.json',
      JSON.stringify({
        client_id: 'https://client.test/secret.json',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'client_secret_post',
      }),
    );
    await expect(directory().find('https://client.test/secret.json')).rejects.toMatchObject({ code: 'invalid_client' });
  });

  test('a document carrying NUL or a lone surrogate is refused before anything is stored', async () => {
    documents.set(
      '/nul.json',
      JSON.stringify({ client_id: 'https://client.test/nul.json', redirect_uris: ['https://app.example/cb\u0000'] }),
    );
    await expect(directory().find('https://client.test/nul.json')).rejects.toMatchObject({ code: 'invalid_client' });
    documents.set(
      '/surrogate.json',
      `{"client_id": "https://client.test/surrogate.json", "client_name": "\\ud800", "redirect_uris": ["${REDIRECT}"]}`,
    );
    await expect(directory().find('https://client.test/surrogate.json')).rejects.toMatchObject({
      code: 'invalid_client',
    });
  });

  test('without allowPrivate, the fetch refuses a loopback document before connecting', async () => {
    await expect(fetchClientMetadataDocument(new URL(`${base}/client.json`))).rejects.toThrow(/not a public address/);
  });
});

// Last: it spends this address's registrations for the minute.
test('registration is rate limited per client address: 429 temporarily_unavailable with Retry-After', async () => {
  let answer: Response | undefined;
  for (let i = 0; i < 100; i++) {
    answer = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    });
    if (answer.status !== 201) break;
  }
  expect(answer!.status).toBe(429);
  expect(Number(answer!.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(((await answer!.json()) as { error: string }).error).toBe('temporarily_unavailable');
});
