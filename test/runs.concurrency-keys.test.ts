import { QueryTypes } from 'sequelize';
import { startTestApp, type TestApp } from './support/app';
import { makeCircuit, makeUser } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget, submitRun, waitForRun } from './support/run-factories';
import type { CircuitDefinition } from '../src/domain/definition';
import { until } from './support/wait';

jest.setTimeout(90_000);

type Target = Awaited<ReturnType<typeof startHoldingTarget>>;

let t: TestApp;
let target: Target;
beforeAll(async () => {
  target = await startHoldingTarget();
  t = await startTestApp();
});
afterAll(async () => {
  await target.close();
  await t.close();
});

const heldNames = () => target.held.map((res) => (res.req.url ?? '').replace(/^\/hold\//, '')).sort();

/** The RUNNING runs of each key that hold a slot (not paused), and what the key's slot rows count (a key without runs in flight has none). */
async function keyCounts(circuitUid: string) {
  const running = await t.app.services.sequelize.query<{ key: string; n: string }>(
    `SELECT concurrency_key AS key, count(*) AS n FROM circuit_runs
      WHERE circuit_uid = $1 AND state = 'RUNNING' AND paused_at IS NULL GROUP BY concurrency_key`,
    { bind: [circuitUid], type: QueryTypes.SELECT },
  );
  const slots = await t.app.services.sequelize.query<{ key: string; running: string }>(
    `SELECT key, COALESCE(s.claimed, 0) - COALESCE(e.ended, 0) AS running
       FROM run_key_slots s FULL JOIN run_key_ends e USING (key) WHERE key LIKE $1`,
    { bind: [`${circuitUid}%`], type: QueryTypes.SELECT },
  );
  return {
    running: Object.fromEntries(running.map((row) => [row.key, Number(row.n)])),
    slots: Object.fromEntries(slots.map((row) => [row.key, Number(row.running)])),
  };
}

test('limit 1 per customer: one run per key RUNNING, the others wait PROVISIONED and start in creation order; other keys run beside', async () => {
  const owner = await makeUser({ credits: 100 });
  const definition: CircuitDefinition = {
    query_schema: { type: 'object', properties: { customer: { type: 'string' }, name: { type: 'string' } } },
    steps: [{ id: 'call', kind: 'http', method: 'GET', url: `${target.url}/hold/{{input.name}}` }],
    concurrency: { limit: 1, key: '{{input.customer}}' },
  };
  const { adaptorUid, circuit } = await makeRunnableCircuit(owner, definition);
  const uids: string[] = [];
  for (const [customer, name] of [
    ['a', 'a1'],
    ['a', 'a2'],
    ['b', 'b1'],
    ['a', 'a3'],
    ['b', 'b2'],
  ]) {
    const res = await submitRun(t, owner.token, adaptorUid, { input: { customer, name } });
    expect(res.status).toBe(200);
    uids.push(res.body.payload.uid as string);
  }
  await until('a1 and b1 held', () => heldNames().join() === 'a1,b1');
  await until('3 runs waiting for their key', async () => {
    const [row] = await t.app.services.sequelize.query<{ n: string }>(
      `SELECT count(*) AS n FROM circuit_runs WHERE circuit_uid = $1 AND state = 'PROVISIONED' AND slot_wait`,
      { bind: [circuit.uid], type: QueryTypes.SELECT },
    );
    return Number(row.n) === 3;
  });
  expect(await keyCounts(circuit.uid)).toEqual({
    running: { [`${circuit.uid}:a`]: 1, [`${circuit.uid}:b`]: 1 },
    slots: { [`${circuit.uid}:a`]: 1, [`${circuit.uid}:b`]: 1 },
  });

  // Releasing a1 only: a2 (older than a3) takes a's slot.
  target.held
    .find((res) => res.req.url === '/hold/a1')!
    .writeHead(200)
    .end('{}');
  target.held.splice(
    target.held.findIndex((res) => res.req.url === '/hold/a1'),
    1,
  );
  await until('a2 held', () => heldNames().join() === 'a2,b1');
  target.release();
  await until('a3 and b2 held', () => heldNames().join() === 'a3,b2');
  target.release();
  for (const uid of uids) expect((await waitForRun(t, uid, owner.token)).state).toBe('COMPLETED');
  await until("every slot given back, and the keys' rows gone with their last runs", async () => {
    const counts = await keyCounts(circuit.uid);
    return Object.keys(counts.slots).length === 0;
  });
});

test('a run waiting on a signal holds no key slot: another run of the key runs meanwhile; the first goes on once signaled', async () => {
  const owner = await makeUser({ credits: 100 });
  const definition: CircuitDefinition = {
    query_schema: { type: 'object', properties: { wait: { type: 'boolean' } } },
    steps: [
      { id: 'gate', kind: 'wait', for: 'signal', timeout_s: 600 },
      { id: 'done', kind: 'template', template: 'done {{steps.gate.output.ok}}' },
    ],
    concurrency: { limit: 1 },
  };
  const { adaptorUid, circuit } = await makeRunnableCircuit(owner, definition);
  const first = await submitRun(t, owner.token, adaptorUid, { input: {} });
  const firstUid = first.body.payload.uid as string;
  await until('the first run waits', async () => {
    const run = await t.rest('GET', `/circuit-runs/${firstUid}`, { token: owner.token });
    return run.body.payload.waiting_for?.length === 1;
  });
  expect((await keyCounts(circuit.uid)).slots).toEqual({ [circuit.uid]: 0 });

  const second = await submitRun(t, owner.token, adaptorUid, { input: {} });
  const secondUid = second.body.payload.uid as string;
  await until('the second run waits too (it was claimed: the slot was free)', async () => {
    const run = await t.rest('GET', `/circuit-runs/${secondUid}`, { token: owner.token });
    return run.body.payload.waiting_for?.length === 1;
  });
  for (const uid of [firstUid, secondUid]) {
    const res = await t.rest('POST', `/circuit-runs/${uid}/signals/gate`, {
      token: owner.token,
      body: { data: { ok: true } },
    });
    expect(res.status).toBe(200);
  }
  for (const uid of [firstUid, secondUid])
    expect((await waitForRun(t, uid, owner.token)).result_blob.output).toBe('done true');
  await until("the key's rows gone with its last run", async () => {
    return Object.keys((await keyCounts(circuit.uid)).slots).length === 0;
  });
});

test('bad input: limit 0 or 10,001, a key with a helper, a key that renders an array (query and batch); a 10 KB key is kept as its hash', async () => {
  const owner = await makeUser({ credits: 100 });
  const { circuit } = await makeCircuit(owner, {}, null);
  const base = {
    query_schema: { type: 'object' },
    steps: [{ id: 'a', kind: 'template', template: 'x' }],
  };
  for (const [concurrency, words] of [
    [{ limit: 0 }, 'definition.concurrency.limit must be a whole number from 1 to 10000 (got 0)'],
    [{ limit: 10_001 }, 'definition.concurrency.limit must be a whole number from 1 to 10000 (got 10001)'],
    [{ limit: 2, key: '{{lookup input "a"}}' }, 'definition.concurrency.key must be text and {{input.<field>}}'],
    [{ key: '{{input.a}}' }, 'definition.concurrency.limit'],
  ] as const) {
    const res = await t.rest('POST', `/circuits/${circuit.uid}/versions`, {
      token: owner.token,
      body: { ...base, concurrency },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(words);
  }

  const { adaptorUid, circuit: keyed } = await makeRunnableCircuit(owner, {
    ...base,
    concurrency: { limit: 5, key: 'c-{{input.customer}}' },
  } as CircuitDefinition);
  const array = await submitRun(t, owner.token, adaptorUid, { input: { customer: ['x'] } });
  expect(array.status).toBe(400);
  expect(array.body.error.message).toBe(
    'input.customer is an array, and concurrency.key renders it: a key is made of strings, numbers and booleans',
  );
  const batch = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/batches`, {
    token: owner.token,
    body: { inputs: [{ customer: 'ok' }, { customer: { id: 1 } }] },
  });
  expect(batch.status).toBe(400);
  expect(batch.body.error.message).toMatch(/^inputs\[1\]\.customer is an object/);

  const long = await submitRun(t, owner.token, adaptorUid, { input: { customer: 'y'.repeat(10_240) } });
  expect(long.status).toBe(200);
  const [row] = await t.app.services.sequelize.query<{ concurrency_key: string; concurrency_limit: number }>(
    'SELECT concurrency_key, concurrency_limit FROM circuit_runs WHERE uid = $1',
    { bind: [long.body.payload.uid], type: QueryTypes.SELECT },
  );
  expect(row.concurrency_key).toMatch(new RegExp(`^${keyed.uid}:sha256:[0-9a-f]{64}$`));
  expect(row.concurrency_limit).toBe(5);
  expect((await waitForRun(t, long.body.payload.uid as string, owner.token)).state).toBe('COMPLETED');
});
