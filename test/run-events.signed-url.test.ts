import { EventSource } from 'eventsource';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { signRunEvents } from '../src/runs/events/signed-url';
import { createApiToken } from '../src/commands/create-api-token';
import { revokeApiToken } from '../src/commands/revoke-api-token';

/** A short-lived signed URL of a run's event stream that an EventSource opens without headers. */
let t: TestApp;
let owner: TestUser;
let other: TestUser;
let adaptorUid: string;
beforeAll(async () => {
  t = await startTestApp();
  owner = await makeUser();
  other = await makeUser();
  ({ adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION));
});
afterAll(async () => {
  await t?.close();
});

async function privateRun(): Promise<string> {
  const res = await submitRun(t, owner.token, adaptorUid, { input: { name: 'signed' } });
  expect(res.status).toBe(200);
  return res.body.payload.uid;
}

/** The signed URL the API answers, on the test server's origin (the answer uses the configured public origin). */
async function signedUrl(uid: string, token: string | null = owner.token) {
  const res = await t.rest('POST', `/circuit-runs/${uid}/events/url`, { token: token ?? undefined });
  if (res.status !== 200) return { status: res.status, url: '', expiresAt: 0 };
  const url = new URL(res.body.payload.url);
  return {
    status: res.status,
    url: `${t.url}${url.pathname}${url.search}`,
    expiresAt: Date.parse(res.body.payload.expires_at),
    path: url.pathname,
    params: url.searchParams,
  };
}

function stateEvents(url: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const states: string[] = [];
    const source = new EventSource(url); // no headers: the signature is the credential
    const timer = setTimeout(() => {
      source.close();
      reject(new Error(`no end; saw ${states.join(',')}`));
    }, 20_000);
    source.addEventListener('state', (event) => {
      states.push((JSON.parse(event.data) as { state: string }).state);
    });
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        clearTimeout(timer);
        resolve(states);
      }
    };
  });
}

test('POST /circuit-runs/{uid}/events/url answers a URL of at most 5 minutes that an EventSource opens without headers', async () => {
  const uid = await privateRun();
  const signed = await signedUrl(uid);
  expect(signed.status).toBe(200);
  expect(signed.path).toBe(`/api/v1/circuit-runs/${uid}/events`);
  expect(signed.params!.get('signature')).toBeTruthy();
  expect(signed.params!.get('reader')).toBe(owner.user.uid);
  expect(signed.expiresAt).toBeGreaterThan(Date.now());
  expect(signed.expiresAt).toBeLessThanOrEqual(Date.now() + 5 * 60_000 + 1000);
  // Without the signature, the private run's stream needs a token.
  expect((await fetch(`${t.url}/api/v1/circuit-runs/${uid}/events`)).status).toBe(401);
  const states = await stateEvents(signed.url);
  expect(states.at(-1)).toBe('COMPLETED');
});

test('same read rules as GET: another user and an anonymous caller cannot get a URL of a private run', async () => {
  const uid = await privateRun();
  expect((await signedUrl(uid, other.token)).status).toBe(403);
  expect((await signedUrl(uid, null)).status).toBe(401);
  expect((await signedUrl('00000000-0000-4000-8000-000000000000')).status).toBe(404);
});

test('an expired signature is 401; a tampered one (signature, run, reader or expiry) is 403', async () => {
  const uid = await privateRun();
  await waitForRun(t, uid, owner.token);
  const signed = await signedUrl(uid);
  const open = (url: string) => fetch(url).then(async (res) => ({ status: res.status, body: await res.text() }));
  const base = `${t.url}/api/v1/circuit-runs/${uid}/events`;
  const past = Math.floor(Date.now() / 1000) - 10;
  const expired = await open(
    `${base}?expires=${past}&reader=${owner.user.uid}&signature=${signRunEvents('test-secret', uid, owner.user.uid, past)}`,
  );
  expect(expired.status).toBe(401);
  expect(expired.body).toMatch(/expired/);
  const params = signed.params!;
  const tamper = (key: string, value: string) => {
    const copy = new URLSearchParams(params);
    copy.set(key, value);
    return `${base}?${copy}`;
  };
  expect((await open(tamper('signature', `${params.get('signature')!.slice(0, -2)}AA`))).status).toBe(403);
  expect((await open(tamper('reader', other.user.uid))).status).toBe(403);
  expect((await open(tamper('expires', String(Number(params.get('expires')) + 60)))).status).toBe(403);
  const otherRun = await privateRun();
  expect((await open(`${t.url}/api/v1/circuit-runs/${otherRun}/events?${params}`)).status).toBe(403);
  // Valid for longer than 5 minutes, even when signed with the secret: refused.
  const far = Math.floor(Date.now() / 1000) + 3600;
  expect(
    (
      await open(
        `${base}?expires=${far}&reader=${owner.user.uid}&signature=${signRunEvents('test-secret', uid, owner.user.uid, far)}`,
      )
    ).status,
  ).toBe(403);
  // The untampered URL still opens.
  expect((await open(signed.url)).status).toBe(200);
});

test('a URL signed with a token lives no longer than the token: revoked, an open stream ends and the URL no longer opens', async () => {
  const minted = await createApiToken(owner.user, 'signer');
  const { adaptorUid: waiting } = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'reply', kind: 'wait', for: 'signal' }],
  });
  const res = await submitRun(t, owner.token, waiting, { input: {} });
  const uid = res.body.payload.uid as string;
  const signed = await signedUrl(uid, minted.token);
  expect(signed.params!.get('token')).toBeTruthy();
  const source = new EventSource(signed.url);
  const opened = new Promise<void>((resolve) => source.addEventListener('state', () => resolve()));
  const closed = new Promise<void>((resolve) => {
    source.onerror = () => {
      if (source.readyState !== EventSource.OPEN) resolve();
    };
  });
  await opened;
  expect(await revokeApiToken(owner.user, minted.record.uid)).toBe(true);
  await closed;
  source.close();
  const again = await fetch(signed.url);
  expect(again.status).toBe(401);
  await t.rest('POST', `/circuit-runs/${uid}/cancel`, { token: owner.token });
});
