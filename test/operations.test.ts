import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { Writable } from 'node:stream';
import pino from 'pino';
import { REDACT_PATHS } from '../src/logger';
import { redactUrl } from '../src/http/observability';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeCircuit, makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';

/** Every log line the app writes, at debug level, with the service's redaction rules. */
const logText: string[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    logText.push(String(chunk));
    done();
  },
});
const log = pino(
  { level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'circuit-service' } },
  sink,
);

let t: TestApp;
let owner: TestUser;
const PASSWORD = 'very-secret-password-123';

beforeAll(async () => {
  t = await startTestApp({ logLevel: 'debug' }, { log });
  owner = await makeUser({ password: PASSWORD });
});
afterAll(async () => {
  await t?.close();
});

const logLines = () =>
  logText
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, any>);

test('/healthz answers without touching the database; /readyz checks it', async () => {
  const health = await t.http('GET', '/healthz');
  expect(health.status).toBe(200);
  expect(health.body).toEqual({ status: 'ok' });
  const ready = await t.http('GET', '/readyz');
  expect(ready.status).toBe(200);
  expect(ready.body).toMatchObject({ status: 'ready' });
});

test('X-Request-Id is echoed when given and generated when not', async () => {
  const given = await t.http('GET', '/healthz', { headers: { 'X-Request-Id': 'trace-abc.123' } });
  expect(given.headers.get('x-request-id')).toBe('trace-abc.123');
  const generated = await t.http('GET', '/healthz');
  expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  const hostile = await t.http('GET', '/healthz', { headers: { 'X-Request-Id': 'x'.repeat(500) } });
  expect(hostile.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
});

test('/metrics is Prometheus text with http_requests_total labelled by route pattern, never by raw URL', async () => {
  const { circuit } = await makeCircuit(owner);
  expect((await t.rest('GET', `/circuits/${circuit.uid}`)).status).toBe(200);
  expect((await t.rest('GET', '/circuits/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  expect((await t.rest('GET', '/no/such/route')).status).toBe(404);
  await t.http('GET', '/readyz');

  const metrics = await t.http('GET', '/metrics');
  expect(metrics.status).toBe(200);
  expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
  const text = metrics.body as string;
  expect(text).toContain('# TYPE http_requests_total counter');
  expect(text).toMatch(
    /http_requests_total\{method="GET",route="\/api\/v1\/circuits\/:circuit_uid",status="200"\} [1-9]/,
  );
  expect(text).toMatch(
    /http_requests_total\{method="GET",route="\/api\/v1\/circuits\/:circuit_uid",status="404"\} [1-9]/,
  );
  expect(text).toMatch(/http_requests_total\{method="GET",route="\/readyz",status="200"\} [1-9]/);
  expect(text).toMatch(/http_requests_total\{method="GET",route="unmatched",status="404"\} [1-9]/);
  // Every route label is a template: no method inside it, no uid.
  const routes = new Set([...text.matchAll(/^http_requests_total\{[^}]*route="([^"]*)"/gm)].map((m) => m[1]));
  for (const route of routes) expect(route).toMatch(/^(\/[\w.:-]*)+$|^unmatched$/);
  expect(text).toContain('http_request_duration_seconds_bucket');
  expect(text).toContain('process_cpu_user_seconds_total');
  expect(text).not.toContain(circuit.uid);
  expect(text).not.toContain('/no/such/route');
});

test('/metrics passes promtool check metrics', async () => {
  const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((file) => fs.existsSync(file));
  if (!promtool) {
    console.log('operations.test: promtool check skipped because promtool is absent (apt-get install -y prometheus)');
    return;
  }
  // Traffic first, so the families show samples: requests, a 404, a run with its steps.
  await t.rest('GET', '/no/such/route');
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const { body } = await submitRun(t, owner.token, adaptorUid, { input: { name: 'promtool' } });
  expect((await waitForRun(t, body.payload.uid, owner.token)).state).toBe('COMPLETED');
  let text = '';
  // The run's totals reach /metrics with the worker's next flush (at most a second): wait for them.
  for (;;) {
    text = (await t.http('GET', '/metrics')).body as string;
    if (/^circuit_runs_total\{state="COMPLETED"\} [1-9]/m.test(text)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const result = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  expect({ status: result.status, problems: `${result.stdout}${result.stderr}`.trim() }).toEqual({
    status: 0,
    problems: '',
  });
});

test('logs carry a request id on every request line and never a token or a password', async () => {
  const { circuit } = await makeCircuit(owner, { isPrivate: true });
  const badToken = 'cst_this-is-not-a-real-token-but-still-secret';
  logText.length = 0;

  expect(
    (
      await t.rest('GET', `/circuits/${circuit.uid}`, {
        token: owner.token,
        headers: { 'X-Request-Id': 'req-with-token' },
      })
    ).status,
  ).toBe(200);
  expect((await t.rest('GET', `/circuits/${circuit.uid}`, { token: badToken })).status).toBe(401);
  expect(
    (
      await t.rest('POST', '/circuits', {
        token: owner.token,
        body: { name: 'logged-circuit', description: 'ordinary' },
      })
    ).status,
  ).toBe(200);
  const gql = await t.gql('query { viewer { username } }', {}, owner.token);
  expect(gql.errors).toBeUndefined();
  // Query-string tokens are not accepted, but must not be logged either.
  await t.rest('GET', `/circuits/${circuit.uid}?access_token=${owner.token}`);

  // The settings web sign-in: the password travels in a form body.
  const signIn = await t.http('GET', '/settings/sign-in');
  expect(signIn.status).toBe(200);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(String(signIn.body))?.[1] ?? '';
  const cookie = signIn.headers.get('set-cookie')?.split(';')[0] ?? '';
  const form = new URLSearchParams({ _csrf: csrf, username: owner.username, password: PASSWORD }).toString();
  const posted = await fetch(`${t.url}/settings/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    body: form,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
  });
  expect([303, 302]).toContain(posted.status);
  // The sign-in's own request line is the last thing logged for it: only once it is there is the absence
  // of the password below a finding (a fixed sleep would pass just as well before anything was written).
  const deadline = Date.now() + 10_000;
  const signInLogged = () =>
    logLines().some(
      (line) =>
        line.msg === 'request completed' &&
        line.req?.method === 'POST' &&
        String(line.req?.url).startsWith('/settings/sign-in'),
    );
  while (!signInLogged() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(signInLogged()).toBe(true);

  const text = logText.join('');
  expect(text).not.toContain(owner.token);
  expect(text).not.toContain(owner.token.slice(4));
  expect(text).not.toContain(badToken);
  expect(text).not.toContain(PASSWORD);
  expect(text).toContain('access_token=[redacted]');

  const requestLines = logLines().filter((line) => line.req || line.res);
  expect(requestLines.length).toBeGreaterThanOrEqual(5);
  for (const line of requestLines) expect(line.req?.id ?? line.reqId).toEqual(expect.any(String));
  expect(requestLines.some((line) => (line.req?.id ?? line.reqId) === 'req-with-token')).toBe(true);
});

test('credentials in a query string are redacted from logged URLs', () => {
  expect(redactUrl('/api/v1/search?search=x&access_token=abc&page=2')).toBe(
    '/api/v1/search?search=x&access_token=[redacted]&page=2',
  );
  expect(redactUrl('/x?password=hunter2')).toBe('/x?password=[redacted]');
  expect(redactUrl('/x/cst_abcDEF-123_x?q=cst_zzz')).toBe('/x/cst_[redacted]?q=cst_[redacted]');
  expect(redactUrl('/plain/path')).toBe('/plain/path');
});

test('/readyz answers 503 when the database is unreachable', async () => {
  const second = await startTestApp({}, { databaseUrl: t.databaseUrl });
  try {
    await second.app.services.sequelize.close();
    const ready = await second.http('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'unavailable' });
    expect((await second.http('GET', '/healthz')).status).toBe(200);
  } finally {
    await second.close().catch(() => {});
  }
});
