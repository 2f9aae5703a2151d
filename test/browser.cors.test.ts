import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { browserSuite } from './support/browser';
import { HELLO_DEFINITION, makeUser, type TestUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import type { CircuitDefinition } from '../src/domain/definition';

/**
 * Cross-origin calls: a listed origin (CORS_ORIGINS) calls with a token; any other origin reads what
 * needs no credential, and follows a private run through its signed event-stream URL. The pages are
 * served by two more loopback servers, so the browser's origin really differs from the service's.
 */

jest.setTimeout(120_000);

/** A loopback server answering every path with one empty HTML page: an origin of its own. */
async function pageServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>other origin</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let listed: Awaited<ReturnType<typeof pageServer>>;
let other: Awaited<ReturnType<typeof pageServer>>;
beforeAll(async () => {
  listed = await pageServer();
  other = await pageServer();
});
afterAll(async () => {
  await listed.close();
  await other.close();
});

const suite = browserSuite('browser.cors.test', () => ({ corsOrigins: [listed.origin], runRateLimitPerMinute: 0 }));
const { maybe } = suite;

let owner: TestUser;
beforeAll(async () => {
  owner = await makeUser({ credits: 1_000 });
});

const signalWait: CircuitDefinition = {
  query_schema: { type: 'object' },
  steps: [
    { id: 'reply', kind: 'wait', for: 'signal' },
    { id: 'after', kind: 'transform', expression: '{"got": steps.reply.output}' },
  ],
  output: 'steps.after.output',
};

async function waitingRun(): Promise<{ uid: string; callbackUrl: string }> {
  const { adaptorUid } = await makeRunnableCircuit(owner, signalWait, { isPrivate: true });
  const { body } = await submitRun(suite.t, owner.token, adaptorUid, { input: {} });
  const uid = body.payload.uid as string;
  for (;;) {
    const run = await suite.t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token });
    const waiting = run.body.payload.waiting_for?.[0];
    if (waiting) return { uid, callbackUrl: waiting.callback_url };
    if (run.body.payload.state !== 'RUNNING' && run.body.payload.state !== 'PROVISIONED')
      throw new Error(`run ended before waiting: ${JSON.stringify(run.body.payload)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('over HTTP', () => {
  const preflight = (path: string, origin: string, headers: string) =>
    fetch(`${suite.t.url}${path}`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': headers,
        // A preflight is answered before authentication: a bad token never gets looked up.
        authorization: 'Bearer cst_not-a-token',
      },
    });

  test('a preflight from a listed origin allows the token and the API headers, before authentication', async () => {
    const res = await preflight('/api/v1/circuit-adaptors/x/query', listed.origin, 'authorization,content-type');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(listed.origin);
    expect(res.headers.get('vary')).toMatch(/\bOrigin\b/);
    const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/);
    expect(allowed).toEqual(
      expect.arrayContaining(['authorization', 'idempotency-key', 'prefer', 'content-type', 'last-event-id']),
    );
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  test('a preflight asking for Authorization from an unlisted origin gets no allow headers', async () => {
    const res = await preflight('/graphql', other.origin, 'authorization,content-type');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-allow-headers')).toBeNull();
    // Without a credential it may: an anonymous GraphQL read sends Content-Type: application/json.
    const anonymous = await preflight('/graphql', other.origin, 'content-type');
    expect(anonymous.headers.get('access-control-allow-origin')).toBe('*');
    expect(anonymous.headers.get('access-control-allow-headers')).not.toMatch(/authorization/i);
  });

  test('a listed origin with a token is echoed and sees the rate-limit and other headers', async () => {
    const res = await suite.t.rest('GET', '/boards', { token: owner.token, headers: { origin: listed.origin } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(listed.origin);
    expect(res.headers.get('vary')).toMatch(/\bOrigin\b/);
    const exposed = res.headers.get('access-control-expose-headers')!.split(/,\s*/);
    expect(exposed).toEqual(
      expect.arrayContaining(['RateLimit-Policy', 'RateLimit', 'RateLimit-Remaining', 'Retry-After', 'Location']),
    );
  });

  test('an unlisted origin: a token gets no allow headers, an anonymous read gets *', async () => {
    const withToken = await suite.t.rest('GET', '/boards', {
      token: owner.token,
      headers: { origin: other.origin },
    });
    expect(withToken.status).toBe(200);
    expect(withToken.headers.get('access-control-allow-origin')).toBeNull();
    expect(withToken.headers.get('access-control-expose-headers')).toBeNull();
    const { circuit } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const anonymous = await suite.t.rest('GET', `/circuits/${circuit.uid}`, { headers: { origin: other.origin } });
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get('access-control-allow-origin')).toBe('*');
    expect(anonymous.headers.get('access-control-allow-credentials')).toBeNull();
    // Neither the settings pages nor requests without an Origin are given any.
    const settings = await suite.t.http('GET', '/settings', { headers: { origin: other.origin } });
    expect(settings.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('signed event-stream and callback URLs answer * whatever the origin', async () => {
    const { uid, callbackUrl } = await waitingRun();
    const signed = await suite.t.rest('POST', `/circuit-runs/${uid}/events/url`, { token: owner.token });
    const url = new URL(signed.body.payload.url);
    const events = await preflight(`${url.pathname}${url.search}`, other.origin, 'last-event-id');
    expect(events.status).toBe(204);
    expect(events.headers.get('access-control-allow-origin')).toBe('*');
    const callback = new URL(callbackUrl);
    const callbackPreflight = await preflight(callback.pathname, other.origin, 'content-type');
    expect(callbackPreflight.headers.get('access-control-allow-origin')).toBe('*');
    const signal = await fetch(`${suite.t.url}${callback.pathname}`, {
      method: 'POST',
      headers: { origin: other.origin, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(signal.status).toBe(202);
    expect(signal.headers.get('access-control-allow-origin')).toBe('*');
    expect((await waitForRun(suite.t, uid, owner.token)).state).toBe('COMPLETED');
  });
});

maybe("an EventSource on another origin follows a private run to its end through the run's signed URL", async () => {
  const { uid, callbackUrl } = await waitingRun();
  const signed = await suite.t.rest('POST', `/circuit-runs/${uid}/events/url`, { token: owner.token });
  expect(signed.status).toBe(200);
  const page = await suite.browser.newPage();
  try {
    await page.goto(`${other.origin}/`);
    // Resolves with the first event's state: the stream is open, cross-origin.
    const first = await page.evaluate(
      (url) =>
        new Promise<string>((resolve, reject) => {
          const w = window as unknown as { states: string[] };
          w.states = [];
          const source = new EventSource(url);
          source.addEventListener('state', (event) => {
            const state = JSON.parse((event as MessageEvent).data).state as string;
            w.states.push(state);
            if (w.states.length === 1) resolve(state);
            if (state === 'COMPLETED' || state === 'EXCEPTION') source.close();
          });
          source.onerror = () => {
            if (w.states.length === 0) reject(new Error('the stream was refused'));
          };
        }),
      signed.body.payload.url as string,
    );
    expect(first).toBe('RUNNING');
    // The signal comes from the page too, as a browser on any origin may send it.
    const accepted = await page.evaluate(
      (url) =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ok":true}' }).then(
          (res) => res.status,
        ),
      callbackUrl,
    );
    expect(accepted).toBe(202);
    await page.waitForFunction(() => (window as unknown as { states: string[] }).states.includes('COMPLETED'));
    expect(await page.evaluate(() => (window as unknown as { states: string[] }).states.at(-1))).toBe('COMPLETED');
  } finally {
    await page.close();
  }
});

maybe('fetch with a token works from a listed origin and is refused from any other', async () => {
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION, { isPrivate: true });
  const { body } = await submitRun(suite.t, owner.token, adaptorUid, { input: { name: 'cors' } });
  const runUrl = `${suite.t.url}/api/v1/circuit-runs/${body.payload.uid}`;
  const call = async (origin: string) => {
    const page = await suite.browser.newPage();
    try {
      await page.goto(`${origin}/`);
      return await page.evaluate(
        ([url, token]) =>
          fetch(url, { headers: { authorization: `Bearer ${token}` } }).then(
            (res) => String(res.status),
            (error: Error) => `refused: ${error.name}`,
          ),
        [runUrl, owner.token] as const,
      );
    } finally {
      await page.close();
    }
  };
  expect(await call(listed.origin)).toBe('200');
  expect(await call(other.origin)).toBe('refused: TypeError');
});
