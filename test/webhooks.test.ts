import type { IncomingHttpHeaders } from 'node:http';
import { QueryTypes } from 'sequelize';
import { Webhook } from 'standardwebhooks';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, startHttpTarget, submitRun, waitForRun } from './support/run-factories';

jest.setTimeout(30_000);

let t: TestApp;
let owner: TestUser;
let adaptorUid: string;
type Target = Awaited<ReturnType<typeof startHttpTarget>>;
let receiver: Target;
/** Status the receiver answers per path: a list is used up one entry per request, then 200. */
const scripted = new Map<string, number[]>();

beforeAll(async () => {
  // Every message here goes to one loopback receiver: above 4 attempts at once (the default) the fair share
  // defers the rest by up to 10 s (test/webhooks.receiver-gate, test/fairness.webhooks); here it only holds them up.
  t = await startTestApp({ webhookRetryBaseMs: 100, webhookHostConcurrency: 16 });
  owner = await makeUser({ credits: 100 });
  ({ adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION));
  receiver = await startHttpTarget((req, res) => {
    const statuses = scripted.get(req.url ?? '') ?? [];
    res.writeHead(statuses.shift() ?? 200).end();
  });
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

const asHeaders = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]));

async function received(path: string, count: number, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const requests = receiver.requests.filter((r) => r.url === path);
    if (requests.length >= count) return requests;
    if (Date.now() > deadline)
      throw new Error(`${path}: ${requests.length} of ${count} deliveries after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The run's outbox rows once none is pending: the positive signal that nothing more will be sent for the run
 * (the outbox row is written with the transition, and only pending rows are sent), after which a count of
 * requests received is final.
 */
async function settledDeliveries(runUid: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await t.app.services.sequelize.query<{ event: string; status: string; attempts: number }>(
      'SELECT event, status, attempts FROM webhook_deliveries WHERE run_uid = $1 ORDER BY event',
      { bind: [runUid], type: QueryTypes.SELECT },
    );
    if (rows.every((row) => row.status !== 'pending')) return rows;
    if (Date.now() > deadline)
      throw new Error(`${runUid}: deliveries still pending after ${timeoutMs} ms: ${JSON.stringify(rows)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function secretOf(user: TestUser): Promise<string> {
  const res = await t.rest('GET', '/webhooks/default/secret', { token: user.token });
  expect(res.status).toBe(200);
  return res.body.payload.key;
}

test('the signing secret is created on first read, stays the same, and needs a token', async () => {
  const user = await makeUser();
  const first = await secretOf(user);
  expect(first).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  expect(await secretOf(user)).toBe(first);
  expect(await secretOf(owner)).not.toBe(first);
  expect((await t.rest('GET', '/webhooks/default/secret')).status).toBe(401);
  const gql = await t.gql('query { webhookSecret { key } }', {}, user.token);
  expect(gql.data.webhookSecret.key).toBe(first);
});

test('start and completed deliveries verify with the standardwebhooks package and carry the run as its owner GETs it', async () => {
  const path = '/signed';
  const { body } = await submitRun(t, owner.token, adaptorUid, {
    input: { name: 'Ada' },
    webhook: `${receiver.url}${path}`,
    webhook_events_filter: ['start', 'completed'],
  });
  const uid = body.payload.uid;
  const run = await waitForRun(t, uid, owner.token);
  const requests = await received(path, 2);
  const receiverLibrary = new Webhook(await secretOf(owner));
  const messages = requests.map((request) => {
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    return receiverLibrary.verify(request.body, asHeaders(request.headers)) as {
      type: string;
      timestamp: string;
      data: any;
    };
  });
  const byType = Object.fromEntries(messages.map((m) => [m.type, m]));
  expect(Object.keys(byType).sort()).toEqual(['circuit_run.completed', 'circuit_run.start']);
  expect(byType['circuit_run.completed'].data).toEqual(run);
  expect(byType['circuit_run.start'].data).toMatchObject({ uid, state: 'RUNNING' });
  expect(byType['circuit_run.start'].data.result_blob).toBeUndefined();
  expect(Number.isNaN(Date.parse(byType['circuit_run.completed'].timestamp))).toBe(false);
  // A tampered body or another secret fails verification.
  expect(() =>
    receiverLibrary.verify(requests[0].body.replace('circuit_run', 'circuit_rum'), asHeaders(requests[0].headers)),
  ).toThrow();
  const stranger = new Webhook(await secretOf(await makeUser()));
  expect(() => stranger.verify(requests[0].body, asHeaders(requests[0].headers))).toThrow();

  const deliveries = await t.rest('GET', `/circuit-runs/${uid}/webhook-deliveries`, { token: owner.token });
  expect(deliveries.status).toBe(200);
  expect(deliveries.body.meta).toEqual({ total_count: 2, limit: 10, page: 1 });
  for (const attempt of deliveries.body.data) {
    expect(attempt).toEqual({
      webhook_id: expect.stringMatching(/^msg_/),
      event: expect.stringMatching(/^(start|completed)$/),
      attempt: 1,
      status_code: 200,
      error: null,
      delivered_at: expect.any(String),
    });
  }
});

test('step messages carry their step event and its seq, and the run as of that event (never COMPLETED while a step starts)', async () => {
  const path = '/steps';
  const { body } = await submitRun(t, owner.token, adaptorUid, {
    input: { name: 'Ada' },
    webhook: `${receiver.url}${path}`,
    webhook_events_filter: ['step', 'completed'],
  });
  const uid = body.payload.uid;
  await waitForRun(t, uid, owner.token);
  // HELLO has two steps: started and completed each, and the run's end.
  const requests = await received(path, 5);
  const settled = await settledDeliveries(uid);
  expect(settled.map((row) => row.event).sort()).toEqual(['completed', 'step', 'step', 'step', 'step']);
  const receiverLibrary = new Webhook(await secretOf(owner));
  const messages = requests.map(
    (request) =>
      receiverLibrary.verify(request.body, asHeaders(request.headers)) as { type: string; seq: number; data: any },
  );
  const steps = messages.filter((m) => m.type === 'circuit_run.step').sort((a, b) => a.seq - b.seq);
  expect(steps).toHaveLength(4);
  const logged = await t.app.services.sequelize.query<{ seq: number; kind: string; data: Record<string, unknown> }>(
    'SELECT seq, kind, data FROM circuit_run_events WHERE run_uid = $1 ORDER BY seq',
    { bind: [uid], type: QueryTypes.SELECT },
  );
  for (const message of steps) {
    // The step event it announces, exactly as logged at its seq.
    const event = logged.find((row) => Number(row.seq) === message.seq)!;
    expect(event.kind).toBe('step');
    expect(message.data.step).toEqual(event.data);
    // The run as of that event: running, without what its end brings.
    expect(message.data).toMatchObject({ uid, state: 'RUNNING' });
    expect(message.data.result_blob).toBeUndefined();
    expect(message.data.ended_at).toBeUndefined();
  }
  // In the log's order: each step started before it completed, the first before the second.
  expect(steps.map((m) => `${m.data.step.step_id}:${m.data.step.status}`)).toEqual(
    logged.filter((row) => row.kind === 'step').map((row) => `${row.data.step_id}:${row.data.status}`),
  );
  const completed = messages.find((m) => m.type === 'circuit_run.completed')!;
  expect(completed.data.state).toBe('COMPLETED');
  expect(completed.seq).toBeGreaterThan(steps[3].seq);
});

test('by default only completed is delivered, also for a run that fails', async () => {
  const path = '/default-filter';
  const failing = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'boom', kind: 'transform', expression: '$error("boom")' }],
    output: 'steps.boom.output',
  });
  const { body } = await submitRun(t, owner.token, failing.adaptorUid, {
    input: {},
    webhook: `${receiver.url}${path}`,
  });
  const run = await waitForRun(t, body.payload.uid, owner.token);
  expect(run.state).toBe('EXCEPTION');
  const [request] = await received(path, 1);
  const message = new Webhook(await secretOf(owner)).verify(request.body, asHeaders(request.headers)) as any;
  expect(message.type).toBe('circuit_run.completed');
  expect(message.data.state).toBe('EXCEPTION');
  expect(await settledDeliveries(run.uid)).toEqual([{ event: 'completed', status: 'delivered', attempts: 1 }]);
  expect(receiver.requests.filter((r) => r.url === path)).toHaveLength(1);
});

test('a receiver that fails twice then succeeds gets 3 attempts with the same webhook-id, each signed anew', async () => {
  const path = '/flaky';
  scripted.set(path, [500, 503]);
  const { body } = await submitRun(t, owner.token, adaptorUid, {
    input: { name: 'Bo' },
    webhook: `${receiver.url}${path}`,
  });
  const uid = body.payload.uid;
  const requests = await received(path, 3);
  expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
  expect(new Set(requests.map((r) => r.body)).size).toBe(1);
  const receiverLibrary = new Webhook(await secretOf(owner));
  for (const request of requests)
    expect(receiverLibrary.verify(request.body, asHeaders(request.headers))).toMatchObject({
      type: 'circuit_run.completed',
    });
  let attempts: any[] = [];
  const deadline = Date.now() + 5_000;
  while (attempts.length < 3 && Date.now() < deadline) {
    attempts = (await t.rest('GET', `/circuit-runs/${uid}/webhook-deliveries`, { token: owner.token })).body.data;
  }
  expect(attempts.map((a) => [a.attempt, a.status_code])).toEqual([
    [1, 500],
    [2, 503],
    [3, 200],
  ]);
  expect(new Set(attempts.map((a) => a.webhook_id))).toEqual(new Set([requests[0].headers['webhook-id']]));
  expect(await settledDeliveries(uid)).toEqual([{ event: 'completed', status: 'delivered', attempts: 3 }]);
  expect(receiver.requests.filter((r) => r.url === path)).toHaveLength(3);
});

test('webhook fields are checked: scheme, credentials, events, a filter without a webhook', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ webhook: 'ftp://example.com/hook' }, 'webhook'],
    [{ webhook: 'not a url' }, 'webhook'],
    [{ webhook: 'https://user:pw@example.com/hook' }, 'webhook'],
    [{ webhook: `https://example.com/${'a'.repeat(3000)}` }, 'webhook'],
    [{ webhook: 'https://example.com/hook', webhook_events_filter: ['finished'] }, 'webhook_events_filter'],
    [{ webhook: 'https://example.com/hook', webhook_events_filter: [] }, 'webhook_events_filter'],
    [{ webhook_events_filter: ['completed'] }, 'webhook_events_filter'],
  ];
  for (const [fields, field] of cases) {
    const res = await submitRun(t, owner.token, adaptorUid, { input: { name: 'x' }, ...fields });
    expect([res.status, res.body.error?.code]).toEqual([400, 'BadClientData']);
    expect(res.body.error.message).toContain(field);
  }
});

test('webhook deliveries are listed only to the user who started the run', async () => {
  const { body } = await submitRun(t, owner.token, adaptorUid, {
    input: { name: 'Cy' },
    is_public: true,
    webhook: `${receiver.url}/listed`,
  });
  const publicRun = body.payload.uid;
  const { body: privateBody } = await submitRun(t, owner.token, adaptorUid, {
    input: { name: 'Cy' },
    webhook: `${receiver.url}/listed`,
  });
  const other = await makeUser();
  const path = (uid: string) => `/circuit-runs/${uid}/webhook-deliveries`;
  expect((await t.rest('GET', path(publicRun))).status).toBe(401);
  expect((await t.rest('GET', path(publicRun), { token: other.token })).body.error.code).toBe('NotAllowed');
  expect((await t.rest('GET', path(privateBody.payload.uid), { token: other.token })).status).toBe(403);
  expect((await t.rest('GET', path('00000000-0000-4000-8000-000000000000'), { token: owner.token })).status).toBe(404);
  expect((await t.rest('GET', path('nope'), { token: owner.token })).status).toBe(404);
  expect((await t.rest('GET', path(publicRun), { token: owner.token })).status).toBe(200);
});

describe('without HTTP_STEP_ALLOW_PRIVATE', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await startTestApp({ httpStepAllowPrivate: false, webhookRetryBaseMs: 100 });
  });
  afterAll(async () => {
    await strict.close();
  });

  test('a private target is refused: http URLs at the query, private addresses at delivery, never retried', async () => {
    const user = await makeUser({ credits: 10 });
    const circuit = await makeRunnableCircuit(user, HELLO_DEFINITION);
    const http = await submitRun(strict, user.token, circuit.adaptorUid, {
      input: { name: 'x' },
      webhook: `${receiver.url}/private`,
    });
    expect([http.status, http.body.error.code]).toEqual([400, 'BadClientData']);
    expect(http.body.error.message).toMatch(/https/);

    const before = receiver.requests.length;
    for (const target of [
      'https://127.0.0.1:9/hook',
      'https://localhost/hook',
      'https://[::ffff:10.0.0.1]/hook',
      'https://169.254.169.254/latest',
    ]) {
      const { body } = await submitRun(strict, user.token, circuit.adaptorUid, {
        input: { name: 'x' },
        webhook: target,
      });
      await waitForRun(strict, body.payload.uid, user.token);
      let attempts: any[] = [];
      const deadline = Date.now() + 5_000;
      while (attempts.length === 0 && Date.now() < deadline) {
        attempts = (
          await strict.rest('GET', `/circuit-runs/${body.payload.uid}/webhook-deliveries`, { token: user.token })
        ).body.data;
      }
      expect(attempts).toEqual([
        expect.objectContaining({ attempt: 1, status_code: null, error: expect.stringMatching(/^refused/) }),
      ]);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.requests.length).toBe(before);
  });
});
