import { QueryTypes } from 'sequelize';
import { startTestApp, type TestApp } from './support/app';
import { makeUser, type TestUser } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget, submitRun, waitForRun } from './support/run-factories';
import type { CircuitDefinition } from '../src/domain/definition';
import { until } from './support/wait';

/**
 * A run whose wait ends (a signal here; a time, an approval and a parked run's wake go the same way) takes its slots
 * back in turn, as a new run takes them: while its concurrency key (or its user's USER_MAX_CONCURRENT_RUNS) is full
 * it waits, marked slot_wait, and goes on once a slot frees. Never more than the limit RUNNING at any sample, whether
 * the run was parked (a row) or waited in its worker's memory.
 */

jest.setTimeout(120_000);

type Target = Awaited<ReturnType<typeof startHoldingTarget>>;

/** A run of `definition`, with this input. */
async function start(t: TestApp, owner: TestUser, adaptorUid: string, input: Record<string, unknown>): Promise<string> {
  const res = await submitRun(t, owner.token, adaptorUid, { input });
  expect(res.status).toBe(200);
  return res.body.payload.uid as string;
}

async function runRow(t: TestApp, uid: string) {
  const [row] = await t.app.services.sequelize.query<{
    state: string;
    paused_at: Date | null;
    parked_at: Date | null;
    slot_wait: boolean;
  }>('SELECT state, paused_at, parked_at, slot_wait FROM circuit_runs WHERE uid = $1', {
    bind: [uid],
    type: QueryTypes.SELECT,
  });
  return row;
}

const waiting = async (t: TestApp, owner: TestUser, uid: string) =>
  (await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token })).body.payload.waiting_for?.length === 1;

/**
 * Samples every 10 ms, until stopped, the most runs that hold a slot at once (RUNNING and not paused) among those
 * `where` selects (`$1` bound to `value`).
 */
function sampleRunning(t: TestApp, where: string, value: string) {
  let sampling = true;
  let most = 0;
  let samples = 0;
  const done = (async () => {
    while (sampling) {
      const [row] = await t.app.services.sequelize.query<{ n: string }>(
        `SELECT count(*) AS n FROM circuit_runs WHERE ${where} AND state = 'RUNNING' AND paused_at IS NULL`,
        { bind: [value], type: QueryTypes.SELECT },
      );
      most = Math.max(most, Number(row.n));
      samples++;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return {
    async stop() {
      sampling = false;
      await done;
      return { most, samples };
    },
  };
}

/** A gate (a signal) then a call held at the target, `/hold/<input.name>` (the reference to the gate orders the two). */
const gated = (target: Target, concurrency?: CircuitDefinition['concurrency']): CircuitDefinition => ({
  query_schema: { type: 'object', properties: { name: { type: 'string' } } },
  steps: [
    { id: 'gate', kind: 'wait', for: 'signal', timeout_s: 600 },
    { id: 'call', kind: 'http', method: 'GET', url: `${target.url}/hold/{{input.name}}{{steps.gate.output.none}}` },
  ],
  ...(concurrency ? { concurrency } : {}),
});

const held = (target: Target) => target.held.map((res) => (res.req.url ?? '').replace(/^\/hold\//, '')).sort();

const signal = async (t: TestApp, owner: TestUser, uid: string) =>
  expect(
    (await t.rest('POST', `/circuit-runs/${uid}/signals/gate`, { token: owner.token, body: { data: {} } })).status,
  ).toBe(200);

/**
 * A and B of one key (limit 1) both wait on their gate; B is signaled first and holds the key's slot at the
 * target; then A is signaled: A must wait for the slot (slot_wait), not run beside B, and go on once B ends.
 */
async function resumeWaitsForKeySlot(t: TestApp, target: Target, parked: boolean) {
  const owner = await makeUser({ credits: 100 });
  const { adaptorUid, circuit } = await makeRunnableCircuit(owner, gated(target, { limit: 1 }));
  const a = await start(t, owner, adaptorUid, { name: 'a' });
  await until('A waits on its gate', () => waiting(t, owner, a));
  const b = await start(t, owner, adaptorUid, { name: 'b' });
  await until('B waits on its gate', () => waiting(t, owner, b));
  if (parked) for (const uid of [a, b]) await until('parked', async () => (await runRow(t, uid)).parked_at !== null);
  else for (const uid of [a, b]) expect((await runRow(t, uid)).parked_at).toBeNull();

  const sampler = sampleRunning(t, 'circuit_uid = $1', circuit.uid);
  await signal(t, owner, b);
  await until('B holds the slot at the target', () => held(target).join() === 'b');
  await signal(t, owner, a);
  await until(
    'A waits for the slot (or, wrongly, runs beside B)',
    async () => (await runRow(t, a)).slot_wait || held(target).includes('a'),
  );
  expect(held(target)).toEqual(['b']);
  const a1 = await runRow(t, a);
  expect(a1).toMatchObject({ state: 'RUNNING', slot_wait: true });
  expect(a1.paused_at).not.toBeNull();

  target.release();
  await until('A holds the slot once B ended', () => held(target).join() === 'a');
  target.release();
  for (const uid of [a, b]) expect((await waitForRun(t, uid, owner.token)).state).toBe('COMPLETED');
  const { most, samples } = await sampler.stop();
  expect(samples).toBeGreaterThan(5);
  expect(most).toBe(1);
}

/** A gate (a signal) and, beside it, a call held at the target, `/hold/<input.name>`: two branches, neither reading the other. */
const branches = (target: Target, concurrency: CircuitDefinition['concurrency']): CircuitDefinition => ({
  query_schema: { type: 'object', properties: { name: { type: 'string' } } },
  steps: [
    { id: 'gate', kind: 'wait', for: 'signal', timeout_s: 600 },
    { id: 'call', kind: 'http', method: 'GET', url: `${target.url}/hold/{{input.name}}` },
  ],
  concurrency,
});

/**
 * A run of a key (limit 1) whose gate waits while its call is still at the target keeps the key's slot: the next run
 * of the key waits until the call ends (then A holds only a wait, and pauses); A's gate, signaled while B's call
 * holds the slot, waits for it. Never 2 RUNNING of the key, never two calls at the target at once.
 */
async function branchKeepsSlot(t: TestApp, target: Target) {
  const owner = await makeUser({ credits: 100 });
  const { adaptorUid, circuit } = await makeRunnableCircuit(owner, branches(target, { limit: 1 }));
  const sampler = sampleRunning(t, 'circuit_uid = $1', circuit.uid);
  const a = await start(t, owner, adaptorUid, { name: 'a' });
  await until(
    "A's call is at the target and its gate waits",
    async () => held(target).join() === 'a' && waiting(t, owner, a),
  );
  expect((await runRow(t, a)).paused_at).toBeNull();
  const b = await start(t, owner, adaptorUid, { name: 'b' });
  await until(
    'B waits for the slot (or, wrongly, calls beside A)',
    async () => (await runRow(t, b)).slot_wait || held(target).includes('b'),
  );
  expect(held(target)).toEqual(['a']);

  target.release();
  await until("B's call holds the slot once A only waits", () => held(target).join() === 'b');
  expect((await runRow(t, a)).paused_at).not.toBeNull();
  await signal(t, owner, a);
  await until('A waits for the slot B holds', async () => (await runRow(t, a)).slot_wait);
  expect((await runRow(t, a)).state).toBe('RUNNING');
  target.release();
  expect((await waitForRun(t, a, owner.token)).state).toBe('COMPLETED');
  await signal(t, owner, b);
  expect((await waitForRun(t, b, owner.token)).state).toBe('COMPLETED');
  const { most, samples } = await sampler.stop();
  expect(samples).toBeGreaterThan(5);
  expect(most).toBe(1);
}

describe('runs that resume from a parked wait (RUN_PARK_AFTER_S=0)', () => {
  let t: TestApp;
  let target: Target;
  beforeAll(async () => {
    target = await startHoldingTarget();
    t = await startTestApp({ runParkAfterSeconds: 0 });
  });
  // A test that failed midway leaves no call held for the next.
  afterEach(() => target.release());
  afterAll(async () => {
    await target.close();
    await t.close();
  });

  test('a parked run signaled while its key (limit 1) is full waits for the slot; never 2 RUNNING of the key', async () => {
    await resumeWaitsForKeySlot(t, target, true);
  });

  test('a run with a wait and a call in flight keeps its slot until the call ends, then parks; never 2 RUNNING of the key', async () => {
    await branchKeepsSlot(t, target);
  });
});

describe('runs that resume from a wait in their worker (RUN_PARK_AFTER_S=600, USER_MAX_CONCURRENT_RUNS=2)', () => {
  let t: TestApp;
  let target: Target;
  beforeAll(async () => {
    target = await startHoldingTarget();
    t = await startTestApp({ runParkAfterSeconds: 600, userMaxConcurrentRuns: 2 });
  });
  // A test that failed midway leaves no call held for the next.
  afterEach(() => target.release());
  afterAll(async () => {
    await target.close();
    await t.close();
  });

  test('a run signaled in memory while its key (limit 1) is full is given back to wait for the slot; never 2 RUNNING of the key', async () => {
    await resumeWaitsForKeySlot(t, target, false);
  });

  test('a run with a wait and a call in flight keeps its slot until the call ends; never 2 RUNNING of the key', async () => {
    await branchKeepsSlot(t, target);
  });

  test('a run waiting for its slot after its wait is cancelled where it lies', async () => {
    const owner = await makeUser({ credits: 100 });
    const { adaptorUid } = await makeRunnableCircuit(owner, gated(target, { limit: 1 }));
    const a = await start(t, owner, adaptorUid, { name: 'a' });
    await until('A waits on its gate', () => waiting(t, owner, a));
    const b = await start(t, owner, adaptorUid, { name: 'b' });
    await until('B waits on its gate', () => waiting(t, owner, b));
    await signal(t, owner, b);
    await until('B holds the slot at the target', () => held(target).join() === 'b');
    await signal(t, owner, a);
    await until('A waits for the slot', async () => (await runRow(t, a)).slot_wait);
    const canceled = await t.rest('POST', `/circuit-runs/${a}/cancel`, { token: owner.token });
    expect(canceled.status).toBe(200);
    expect(canceled.body.payload).toMatchObject({ state: 'EXCEPTION', error: { code: 'Canceled' } });
    expect(held(target)).toEqual(['b']);
    target.release();
    expect((await waitForRun(t, b, owner.token)).state).toBe('COMPLETED');
  });

  test("a run signaled while its user's 2 slots are taken waits for one; never 3 of the user's RUNNING", async () => {
    const owner = await makeUser({ credits: 100 });
    const { adaptorUid } = await makeRunnableCircuit(owner, gated(target));
    const a = await start(t, owner, adaptorUid, { name: 'a' });
    await until('A waits on its gate', () => waiting(t, owner, a));
    const sampler = sampleRunning(t, 'user_uid = $1', owner.user.uid);
    const { adaptorUid: busyAdaptor } = await makeRunnableCircuit(owner, {
      query_schema: { type: 'object', properties: { name: { type: 'string' } } },
      steps: [{ id: 'call', kind: 'http', method: 'GET', url: `${target.url}/hold/{{input.name}}` }],
    });
    const busy = [
      await start(t, owner, busyAdaptor, { name: 'b1' }),
      await start(t, owner, busyAdaptor, { name: 'b2' }),
    ];
    await until("the user's two slots are held at the target", () => held(target).join() === 'b1,b2');
    await signal(t, owner, a);
    await until(
      'A waits for a slot (or, wrongly, runs beside B1 and B2)',
      async () => (await runRow(t, a)).slot_wait || held(target).includes('a'),
    );
    expect(held(target)).toEqual(['b1', 'b2']);

    target.release();
    await until('A holds a slot once one freed', () => held(target).join() === 'a');
    target.release();
    for (const uid of [a, ...busy]) expect((await waitForRun(t, uid, owner.token)).state).toBe('COMPLETED');
    const { most } = await sampler.stop();
    expect(most).toBe(2);
  });
});
