import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import type { CircuitDefinition } from '../src/domain/definition';

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

async function untilWaiting(uid: string, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token });
    if (body.payload.waiting_for) return body.payload;
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
