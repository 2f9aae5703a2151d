import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import type { CircuitDefinition } from '../src/domain/definition';
import { createWaitUrls } from '../src/runs/wait-urls';

/**
 * Wait steps end to end: a durable sleep, a wait for a signal sent by the owner or to the step's
 * callback URL (no token), its schema, its timeout, and the callback URL known to earlier steps.
 */

jest.setTimeout(120_000);

let t: TestApp;
let owner: TestUser;
beforeAll(async () => {
  t = await startTestApp({ runRateLimitPerMinute: 0 });
  owner = await makeUser({ credits: 5_000 });
});
afterAll(async () => {
  await t.close();
});

async function start(definition: CircuitDefinition, input: Record<string, unknown> = {}): Promise<string> {
  const { adaptorUid } = await makeRunnableCircuit(owner, definition);
  const { body } = await submitRun(t, owner.token, adaptorUid, { input });
  return body.payload.uid as string;
}

async function untilWaiting(uid: string, count = 1, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token });
    if (body.payload.waiting_for?.length >= count) return body.payload;
    if (Date.now() > deadline) throw new Error(`run ${uid} is not waiting: ${JSON.stringify(body.payload)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const signalWait = (extra: Record<string, unknown> = {}): CircuitDefinition => ({
  query_schema: { type: 'object' },
  steps: [
    { id: 'hand', kind: 'template', template: '{{waits.reply.callback_url}}' },
    { id: 'reply', kind: 'wait', for: 'signal', ...extra },
    { id: 'after', kind: 'transform', expression: '{"got": steps.reply.output, "url": steps.hand.output}' },
  ],
  output: 'steps.after.output',
});

test('a wait for time sleeps durably and answers {waited_s}', async () => {
  const uid = await start({
    query_schema: { type: 'object' },
    steps: [{ id: 'nap', kind: 'wait', for: 'time', duration_s: 1 }],
  });
  const run = await waitForRun(t, uid, owner.token);
  expect(run.state).toBe('COMPLETED');
  expect(run.result_blob.output).toEqual({ waited_s: 1 });
});

test('a signal sent to the callback URL (no token) is the step output; the URL is known to earlier steps', async () => {
  const uid = await start(signalWait());
  const waiting = await untilWaiting(uid);
  expect(waiting.waiting_for).toEqual([
    {
      step_id: 'reply',
      kind: 'signal',
      expires_at: expect.any(String),
      callback_url: expect.stringContaining('/api/v1/callbacks/'),
    },
  ]);
  const url = new URL(waiting.waiting_for[0].callback_url);
  const post = (body: unknown, path = url.pathname) =>
    fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const forged = await post(
    { ok: true },
    url.pathname.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
  );
  expect(forged.status).toBe(404);
  const accepted = await post({ video: 'done' });
  expect(accepted.status).toBe(202);
  expect(accepted.headers.get('access-control-allow-origin')).toBe('*');
  expect(await accepted.json()).toEqual({ status: 'success', payload: { accepted: true } });
  expect((await post({ video: 'done' })).status).toBe(202);
  expect((await post({ video: 'other' })).status).toBe(409);
  const run = await waitForRun(t, uid, owner.token);
  expect(run.state).toBe('COMPLETED');
  expect(run.result_blob.output).toEqual({ got: { video: 'done' }, url: waiting.waiting_for[0].callback_url });
  expect((await post({ video: 'done' })).status).toBe(409);
});

test("the owner's signal; a body failing the schema is 400 and the step keeps waiting", async () => {
  const uid = await start(
    signalWait({ schema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } }),
  );
  await untilWaiting(uid);
  const bad = await t.rest('POST', `/circuit-runs/${uid}/signals/reply`, {
    token: owner.token,
    body: { data: { n: 'x' } },
  });
  expect(bad.status).toBe(400);
  expect((await untilWaiting(uid)).state).toBe('RUNNING');
  const good = await t.rest('POST', `/circuit-runs/${uid}/signals/reply`, {
    token: owner.token,
    body: { data: { n: 3 } },
  });
  expect(good.status).toBe(200);
  const run = await waitForRun(t, uid, owner.token);
  expect(run.result_blob.output.got).toEqual({ n: 3 });
});

test('a signal wait that times out: fail ends WaitTimedOut, continue goes on with null', async () => {
  const failing = await start(signalWait({ timeout_s: 1 }));
  const going = await start(signalWait({ timeout_s: 1, on_timeout: 'continue' }));
  const failed = await waitForRun(t, failing, owner.token);
  expect(failed.state).toBe('EXCEPTION');
  expect(failed.error).toEqual(expect.objectContaining({ code: 'WaitTimedOut', step_id: 'reply' }));
  const went = await waitForRun(t, going, owner.token);
  expect(went.state).toBe('COMPLETED');
  expect(went.result_blob.output.got).toBeNull();
});

describe('bad input', () => {
  async function publish(steps: unknown[]) {
    const { circuit } = await makeRunnableCircuit(owner, {
      query_schema: { type: 'object' },
      steps: [{ id: 'x', kind: 'template', template: 'x' }],
    });
    return t.rest('POST', `/circuits/${circuit.uid}/versions`, {
      token: owner.token,
      body: { query_schema: { type: 'object' }, steps },
    });
  }

  test('a year and a second, a far until, both or neither of duration_s and until: 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ id: 'w', kind: 'wait', for: 'time', duration_s: 31_536_001 }, 'duration_s'],
      [{ id: 'w', kind: 'wait', for: 'signal', timeout_s: 31_536_001 }, 'timeout_s'],
      [{ id: 'w', kind: 'wait', for: 'time', until: new Date(Date.now() + 366 * 86_400_000).toISOString() }, 'until'],
      [{ id: 'w', kind: 'wait', for: 'time', until: 'tomorrow' }, 'until'],
      [{ id: 'w', kind: 'wait', for: 'time' }, 'duration_s'],
      [{ id: 'w', kind: 'wait', for: 'time', duration_s: 5, schema: {} }, 'schema'],
      [{ id: 'w', kind: 'wait', for: 'signal', on_timeout: 'explode' }, 'on_timeout'],
      [{ id: 'w', kind: 'wait', for: 'later' }, 'for'],
    ];
    for (const [step, field] of cases) {
      const res = await publish([step]);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(field);
    }
  });

  test('an until already past does not wait', async () => {
    const uid = await start({
      query_schema: { type: 'object' },
      steps: [{ id: 'nap', kind: 'wait', for: 'time', until: '2020-01-01T00:00:00Z' }],
    });
    const run = await waitForRun(t, uid, owner.token);
    expect(run.state).toBe('COMPLETED');
    expect(run.result_blob.output).toEqual({ waited_s: 0 });
  });

  test('callback URLs: truncated, moved to another step, unknown run: 404 alike; non-JSON 400; over 1 MiB 413; ended run 409', async () => {
    const uid = await start({
      query_schema: { type: 'object' },
      steps: [
        { id: 'a', kind: 'wait', for: 'signal' },
        { id: 'b', kind: 'wait', for: 'signal' },
      ],
    });
    const waiting = await untilWaiting(uid, 2);
    const urls = Object.fromEntries(waiting.waiting_for.map((w: any) => [w.step_id, new URL(w.callback_url).pathname]));
    const post = (path: string, body: string, type = 'application/json') =>
      fetch(`${t.url}${path}`, { method: 'POST', headers: { 'content-type': type }, body });
    const keyOf = (path: string) => path.split('/').pop()!;
    const truncated = await post(urls.a.slice(0, -3), '{}');
    const moved = await post(urls.a.replace(`/a/`, '/b/'), '{}');
    const unknown = await post(urls.a.replace(uid, '00000000-0000-4000-8000-000000000000'), '{}');
    const malformed = await post(`/api/v1/callbacks/not-a-run/a/${keyOf(urls.a)}`, '{}');
    const bodies = [];
    for (const res of [truncated, moved, unknown, malformed]) {
      expect(res.status).toBe(404);
      bodies.push(JSON.stringify((await res.json()).error));
    }
    expect(new Set(bodies).size).toBe(1);
    expect((await post(urls.a, 'not json', 'text/plain')).status).toBe(400);
    expect((await post(urls.a, '{"broken":')).status).toBe(400);
    expect((await post(urls.a, JSON.stringify({ big: 'x'.repeat(1024 * 1024) }))).status).toBe(413);
    const preflight = await fetch(`${t.url}${urls.a}`, { method: 'OPTIONS' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect((await t.rest('POST', `/circuit-runs/${uid}/cancel`, { token: owner.token })).status).toBe(200);
    await waitForRun(t, uid, owner.token);
    expect((await post(urls.b, '{}')).status).toBe(409);
  });

  test('a signal that comes before its step waits is kept and consumed when it does', async () => {
    const uid = await start({
      query_schema: { type: 'object' },
      steps: [
        { id: 'nap', kind: 'wait', for: 'time', duration_s: 2 },
        { id: 'reply', kind: 'wait', for: 'signal' },
      ],
      output: 'steps.reply.output',
    });
    const url = createWaitUrls('test-secret', () => t.url).url(uid, 'reply', 'signal');
    const early = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"early":true}',
    });
    expect(early.status).toBe(202);
    const run = await waitForRun(t, uid, owner.token);
    expect(run.state).toBe('COMPLETED');
    expect(run.result_blob.output).toEqual({ early: true });
  });

  test('GraphQL signalCircuitRun, and only the owner may signal', async () => {
    const uid = await start({
      query_schema: { type: 'object' },
      steps: [{ id: 'reply', kind: 'wait', for: 'signal' }],
    });
    await untilWaiting(uid);
    const stranger = await makeUser();
    const denied = await t.rest('POST', `/circuit-runs/${uid}/signals/reply`, {
      token: stranger.token,
      body: { data: 1 },
    });
    expect([403, 404]).toContain(denied.status);
    const answer = await t.gql(
      'mutation ($uid: ID!) { signalCircuitRun(runUid: $uid, stepId: "reply", data: {n: 1}) { uid state } }',
      { uid },
      owner.token,
    );
    expect(answer.errors).toBeUndefined();
    const run = await waitForRun(t, uid, owner.token);
    expect(run.result_blob.output).toEqual({ n: 1 });
  });
});
