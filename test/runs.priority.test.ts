import { QueryTypes } from 'sequelize';
import { startTestApp, type TestApp } from './support/app';
import { makeUser, type TestUser } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget, submitRun, waitForRun } from './support/run-factories';
import { until } from './support/wait';

jest.setTimeout(90_000);

type Target = Awaited<ReturnType<typeof startHoldingTarget>>;

async function slotWaiting(t: TestApp): Promise<number> {
  const [row] = await t.app.services.sequelize.query<{ n: string }>(
    `SELECT count(*) AS n FROM circuit_runs WHERE state = 'PROVISIONED' AND slot_wait`,
    { type: QueryTypes.SELECT },
  );
  return Number(row.n);
}

/** A circuit whose one step waits at `/hold/<input.name>` of the target: the held URLs say which run holds the slot. */
async function holdingCircuit(owner: TestUser, target: Target) {
  return makeRunnableCircuit(owner, {
    query_schema: { type: 'object', properties: { name: { type: 'string' } } },
    steps: [{ id: 'wait', kind: 'http', method: 'GET', url: `${target.url}/hold/{{input.name}}` }],
  });
}

/** Releases the held requests one at a time, each time waiting for the next one: the order the runs were claimed in. */
async function claimOrder(t: TestApp, target: Target, count: number): Promise<string[]> {
  const order: string[] = [];
  for (let i = 0; i < count; i++) {
    await until(`a held request (${i + 1} of ${count})`, () => target.held.length === 1);
    const [res] = target.held;
    order.push(((res.req.url ?? '') as string).replace(/^\/hold\//, ''));
    target.release();
  }
  await until('the last request released', () => target.held.length === 0);
  return order;
}

describe('priority within one user (USER_MAX_CONCURRENT_RUNS=1)', () => {
  let t: TestApp;
  let target: Target;
  beforeAll(async () => {
    target = await startHoldingTarget();
    t = await startTestApp({ userMaxConcurrentRuns: 1 });
  });
  afterAll(async () => {
    await target.close();
    await t.close();
  });

  test('the waiting runs of one user are claimed highest priority first, then oldest first; 10 and "high" are 400 naming priority', async () => {
    const owner = await makeUser({ credits: 100 });
    const { adaptorUid } = await holdingCircuit(owner, target);
    const first = await submitRun(t, owner.token, adaptorUid, { input: { name: 'first' } });
    expect(first.status).toBe(200);
    await until('the first run holds the slot', () => target.held.length === 1);

    const sent: Array<[string, number | undefined]> = [
      ['p1', 1],
      ['p9a', 9],
      ['default', undefined],
      ['p3', 3],
      ['p9b', 9],
      ['p0', 0],
    ];
    const uids: string[] = [];
    for (const [name, priority] of sent) {
      const res = await submitRun(t, owner.token, adaptorUid, {
        input: { name },
        ...(priority === undefined ? {} : { priority }),
      });
      expect(res.status).toBe(200);
      uids.push(res.body.payload.uid as string);
    }
    await until('6 runs waiting for the slot', async () => (await slotWaiting(t)) === 6);

    const order = await claimOrder(t, target, 7);
    expect(order).toEqual(['first', 'p9a', 'p9b', 'default', 'p3', 'p1', 'p0']);
    for (const uid of uids) expect((await waitForRun(t, uid, owner.token)).state).toBe('COMPLETED');

    // The run shows its priority to its owner (5 when the query sent none): REST GET and list, GraphQL.
    expect((await t.rest('GET', `/circuit-runs/${uids[1]}`, { token: owner.token })).body.payload.priority).toBe(9);
    expect((await t.rest('GET', `/circuit-runs/${uids[2]}`, { token: owner.token })).body.payload.priority).toBe(5);
    const listed = await t.rest('GET', '/users/circuit-runs?limit=100', { token: owner.token });
    const byUid = new Map(listed.body.data.map((run: { uid: string; priority: number }) => [run.uid, run]));
    expect(uids.map((uid) => (byUid.get(uid) as { priority: number }).priority)).toEqual([1, 9, 5, 3, 9, 0]);
    const viewed = await t.gql(
      `query($uid: ID!) { circuitRun(uid: $uid) { priority } viewer { runs(limit: 100) { items { uid priority } } } }`,
      { uid: uids[5] },
      owner.token,
    );
    expect(viewed.data.circuitRun.priority).toBe(0);
    expect(viewed.data.viewer.runs.items.find((run: { uid: string }) => run.uid === uids[3]).priority).toBe(3);

    for (const priority of [10, -1, 'high', 2.5]) {
      const bad = await submitRun(t, owner.token, adaptorUid, { input: { name: 'x' }, priority });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toMatch(/priority/);
    }
    // GraphQL checks it in the service: the same words.
    const gql = await t.gql(
      `mutation { queryCircuitAdaptor(adaptorUid: "${adaptorUid}", input: {name: "x"}, priority: 10) { uid } }`,
      {},
      owner.token,
    );
    expect(gql.errors?.[0]?.message).toMatch(/priority must be a whole number from 0 to 9/);
    expect(gql.code).toBe('BadClientData');
    const batch = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/batches`, {
      token: owner.token,
      body: { inputs: [{ name: 'x' }], priority: 'high' },
    });
    expect(batch.status).toBe(400);
    expect(batch.body.error.message).toMatch(/priority/);
  });
});

describe('priority never moves one user ahead of another (RUN_MAX_INFLIGHT=1)', () => {
  let t: TestApp;
  let target: Target;
  beforeAll(async () => {
    target = await startHoldingTarget();
    t = await startTestApp({ runMaxInflight: 1 });
  });
  afterAll(async () => {
    await target.close();
    await t.close();
  });

  test("A's priority 9 runs do not pass B's older priority 0 runs; A's own go in priority order", async () => {
    const a = await makeUser({ credits: 100 });
    const b = await makeUser({ credits: 100 });
    const c = await makeUser({ credits: 100 });
    const circuitA = await holdingCircuit(a, target);
    const circuitB = await holdingCircuit(b, target);
    const circuitC = await holdingCircuit(c, target);
    // C's run fills the worker's one place: the others wait for it.
    expect((await submitRun(t, c.token, circuitC.adaptorUid, { input: { name: 'c' } })).status).toBe(200);
    await until("C's run holds the worker", () => target.held.length === 1);

    for (const [name, priority] of [
      ['b1', 0],
      ['b2', 0],
      ['b3', 0],
    ] as const)
      expect((await submitRun(t, b.token, circuitB.adaptorUid, { input: { name }, priority })).status).toBe(200);
    for (const [name, priority] of [
      ['a-low', 1],
      ['a1', 9],
      ['a2', 9],
    ] as const)
      expect((await submitRun(t, a.token, circuitA.adaptorUid, { input: { name }, priority })).status).toBe(200);
    await until('6 runs waiting for room', async () => (await slotWaiting(t)) === 6);

    const order = await claimOrder(t, target, 7);
    // One place frees at a time, and between users the older waiting run goes first (docs/fairness.md,
    // Waking): B's, whatever A's priorities. Among A's own, 9, 9, then 1, though a-low is A's oldest.
    expect(order).toEqual(['c', 'b1', 'b2', 'b3', 'a1', 'a2', 'a-low']);
  });
});
