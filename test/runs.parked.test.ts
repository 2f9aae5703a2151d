import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import type { CircuitDefinition } from '../src/domain/definition';

/**
 * Parked runs: with RUN_PARK_AFTER_S=0 a run whose steps in flight all wait becomes a row at once (no
 * worker holds it, no heartbeat); a signal, a decision or its timer wakes it, and it goes on from its
 * journal; a cancel ends it where it lies. A waiting run holds no USER_MAX_CONCURRENT_RUNS slot.
 */

jest.setTimeout(120_000);

let t: TestApp;
let owner: TestUser;
beforeAll(async () => {
  t = await startTestApp({ runRateLimitPerMinute: 0, runParkAfterSeconds: 0, userMaxConcurrentRuns: 2 });
  owner = await makeUser({ credits: 5_000 });
});
afterAll(async () => {
  await t.close();
});

async function start(definition: CircuitDefinition): Promise<string> {
  const { adaptorUid } = await makeRunnableCircuit(owner, definition);
  const { body } = await submitRun(t, owner.token, adaptorUid, { input: {} });
  return body.payload.uid as string;
}

async function row(uid: string) {
  const [r] = await t.app.services.sequelize.query<{
    state: string;
    parked_at: Date | null;
    wake_at: Date | null;
    heartbeat_at: Date | null;
    attempt: number;
  }>(`SELECT state, parked_at, wake_at, heartbeat_at, attempt FROM circuit_runs WHERE uid = $1`, {
    bind: [uid],
    type: 'SELECT' as never,
  });
  return r;
}

async function untilParked(uid: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await row(uid);
    if (r.parked_at) return r;
    if (Date.now() > deadline) throw new Error(`run ${uid} did not park: ${JSON.stringify(r)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const signalled: CircuitDefinition = {
  query_schema: { type: 'object' },
  steps: [
    { id: 'before', kind: 'template', template: 'one' },
    { id: 'reply', kind: 'wait', for: 'signal' },
    { id: 'after', kind: 'transform', expression: '{"before": steps.before.output, "reply": steps.reply.output}' },
  ],
  output: 'steps.after.output',
};

test('a run parks on a signal wait and completes on the signal, on a new attempt not counted as a crash', async () => {
  const uid = await start(signalled);
  const parked = await untilParked(uid);
  expect(parked.state).toBe('RUNNING');
  expect(parked.heartbeat_at).toBeNull();
  const res = await t.rest('POST', `/circuit-runs/${uid}/signals/reply`, {
    token: owner.token,
    body: { data: { ok: 1 } },
  });
  expect(res.status).toBe(200);
  const run = await waitForRun(t, uid, owner.token);
  expect(run.state).toBe('COMPLETED');
  expect(run.result_blob.output).toEqual({ before: 'one', reply: { ok: 1 } });
});

test('a parked time wait is woken by its timer', async () => {
  const uid = await start({
    query_schema: { type: 'object' },
    steps: [{ id: 'nap', kind: 'wait', for: 'time', duration_s: 2 }],
  });
  const parked = await untilParked(uid);
  expect(parked.wake_at).not.toBeNull();
  const run = await waitForRun(t, uid, owner.token);
  expect(run.state).toBe('COMPLETED');
  expect(run.result_blob.output).toEqual({ waited_s: 2 });
});

test('a parked run is canceled where it lies', async () => {
  const uid = await start(signalled);
  await untilParked(uid);
  const res = await t.rest('POST', `/circuit-runs/${uid}/cancel`, { token: owner.token });
  expect(res.status).toBe(200);
  const run = await waitForRun(t, uid, owner.token);
  expect(run.state).toBe('EXCEPTION');
  expect(run.error.code).toBe('Canceled');
});

test('waiting runs hold no USER_MAX_CONCURRENT_RUNS slot (limit 2, 5 waiting, one more still runs)', async () => {
  const waiting = await Promise.all([1, 2, 3, 4, 5].map(() => start(signalled)));
  for (const uid of waiting) await untilParked(uid);
  const quick = await start({
    query_schema: { type: 'object' },
    steps: [{ id: 'a', kind: 'template', template: 'hi' }],
  });
  expect((await waitForRun(t, quick, owner.token)).state).toBe('COMPLETED');
  for (const uid of waiting)
    await t.rest('POST', `/circuit-runs/${uid}/signals/reply`, { token: owner.token, body: { data: 1 } });
  for (const uid of waiting) expect((await waitForRun(t, uid, owner.token)).state).toBe('COMPLETED');
});

test('a delayed start waits PROVISIONED as a row and starts when due', async () => {
  const { adaptorUid } = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'a', kind: 'template', template: 'started' }],
  });
  const { body } = await submitRun(t, owner.token, adaptorUid, { input: {}, delay_s: 1 });
  expect(body.payload.state).toBe('PROVISIONED');
  const uid = body.payload.uid as string;
  expect((await row(uid)).parked_at).not.toBeNull();
  const run = await waitForRun(t, uid, owner.token);
  expect(run.state).toBe('COMPLETED');
  expect(run.result_blob.output).toBe('started');
});
