import { useTestApp } from './support/app';
import { makeUser, HELLO_DEFINITION } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget } from './support/run-factories';
import { CircuitRun } from '../src/models/CircuitRun';

const t = useTestApp();

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** Polls GET /batches/{uid} until no run is in flight, checking on every read that the counts add up to the total. */
async function untilSettled(uid: string, token: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.rest('GET', `/batches/${uid}`, { token });
    expect(res.status).toBe(200);
    expect(sum(res.body.payload.counts)).toBe(res.body.payload.total);
    if (res.body.payload.counts.PROVISIONED + res.body.payload.counts.RUNNING === 0) return res.body.payload;
    if (Date.now() > deadline)
      throw new Error(`batch ${uid} still in flight: ${JSON.stringify(res.body.payload.counts)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('1,000 inputs are admitted in one request well under a second; a balance covering 600 ends exactly 400 InsufficientCredits; counts add up while it runs', async () => {
  const owner = await makeUser();
  const caller = await makeUser({ credits: 600 });
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const inputs = Array.from({ length: 1000 }, (_, i) => ({ name: `n${i}` }));

  const began = performance.now();
  const res = await t.rest('POST', `/circuit-adaptors/${hello.adaptorUid}/batches`, {
    token: caller.token,
    body: { inputs, tags: ['ds:1'], metadata: { set: 'a' } },
  });
  const elapsed = performance.now() - began;
  console.log(`a batch of 1,000 inputs was admitted in ${elapsed.toFixed(0)} ms`);
  expect(res.status).toBe(200);
  expect(elapsed).toBeLessThan(3_000);
  const batch = res.body.payload;
  expect(batch).toMatchObject({ total: 1000, circuit_uid: hello.circuit.uid });
  expect(sum(batch.counts)).toBe(1000);
  expect(batch.counts.EXCEPTION).toBe(400);

  const settled = await untilSettled(batch.uid, caller.token);
  expect(settled.counts).toEqual({ PROVISIONED: 0, RUNNING: 0, COMPLETED: 600, EXCEPTION: 400 });
  const refused = await CircuitRun.findAll({
    where: { batch_uid: batch.uid, state: 'EXCEPTION' },
    attributes: ['error', 'tags', 'metadata', 'credits_cost'],
  });
  expect(refused.every((run) => run.error?.code === 'InsufficientCredits')).toBe(true);
  expect((await t.rest('GET', '/users/me', { token: caller.token })).body.payload).toMatchObject({
    credits: 0,
    credits_held: 0,
  });

  const page = await t.rest('GET', `/batches/${batch.uid}/runs?limit=5&page=2`, { token: caller.token });
  expect(page.status).toBe(200);
  expect(page.body.meta).toEqual({ total_count: 1000, limit: 5, page: 2 });
  expect(page.body.data[0]).toMatchObject({ batch_uid: batch.uid, tags: ['ds:1'], metadata: { set: 'a' } });
  const tagged = await t.rest('GET', '/users/circuit-runs?tag=ds:1&state=EXCEPTION&limit=1', { token: caller.token });
  expect(tagged.body.meta.total_count).toBe(400);
  expect(tagged.body.data[0].error.code).toBe('InsufficientCredits');
}, 120_000);

test("a batch announces each admitted run as created, with the batch's webhook events; a run refused for credits is not announced", async () => {
  const owner = await makeUser();
  const caller = await makeUser({ credits: 3 });
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const announced: { uid: string; user_uid: string; webhook_events?: string[] | null }[] = [];
  t.app.runtime.runs.lifecycle.on('created', ({ run }) => {
    if (run.user_uid === caller.user.uid) announced.push(run);
  });
  const res = await t.rest('POST', `/circuit-adaptors/${hello.adaptorUid}/batches`, {
    token: caller.token,
    body: { inputs: Array.from({ length: 5 }, (_, i) => ({ name: `n${i}` })) },
  });
  expect(res.status).toBe(200);
  expect(res.body.payload.counts.EXCEPTION).toBe(2);
  const admitted = await CircuitRun.findAll({
    where: { batch_uid: res.body.payload.uid },
    attributes: ['uid', 'error'],
  });
  const expected = admitted.filter((run) => run.error === null).map((run) => run.uid);
  expect(expected).toHaveLength(3);
  expect(announced.map((run) => run.uid).sort()).toEqual(expected.sort());
  expect(announced.every((run) => run.webhook_events === null)).toBe(true);
});

test('one invalid input refuses the whole batch naming its index, and nothing is created; bounds of inputs', async () => {
  const owner = await makeUser();
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const inputs: unknown[] = Array.from({ length: 50 }, (_, i) => ({ name: `n${i}` }));
  inputs[37] = { name: 42 };
  const res = await t.rest('POST', `/circuit-adaptors/${hello.adaptorUid}/batches`, {
    token: owner.token,
    body: { inputs },
  });
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('BadClientData');
  expect(res.body.error.message).toMatch(/inputs\[37\]/);
  inputs[37] = 'not an object';
  const notObject = await t.rest('POST', `/circuit-adaptors/${hello.adaptorUid}/batches`, {
    token: owner.token,
    body: { inputs },
  });
  expect(notObject.status).toBe(400);
  expect(notObject.body.error.message).toMatch(/inputs(\[37\]|\/37| )/);
  expect(await CircuitRun.count({ where: { user_uid: owner.user.uid } })).toBe(0);

  for (const bad of [[], Array.from({ length: 1001 }, () => ({ name: 'x' }))]) {
    const refused = await t.rest('POST', `/circuit-adaptors/${hello.adaptorUid}/batches`, {
      token: owner.token,
      body: { inputs: bad },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/^inputs/);
  }
  const tooManyTags = await t.rest('POST', `/circuit-adaptors/${hello.adaptorUid}/batches`, {
    token: owner.token,
    body: { inputs: [{ name: 'x' }], tags: Array.from({ length: 11 }, (_, i) => `t${i}`) },
  });
  expect(tooManyTags.status).toBe(400);
  expect(tooManyTags.body.error.message).toMatch(/^tags/);
  expect(await CircuitRun.count({ where: { user_uid: owner.user.uid } })).toBe(0);
  expect(
    (await t.rest('POST', `/circuit-adaptors/${hello.adaptorUid}/batches`, { body: { inputs: [{ name: 'x' }] } }))
      .status,
  ).toBe(401);
});

test('cancel of a running batch ends every run not yet ended EXCEPTION Canceled; only its submitter may read or cancel it', async () => {
  const target = await startHoldingTarget();
  try {
    const owner = await makeUser();
    const stranger = await makeUser();
    const holding = await makeRunnableCircuit(owner, target.holdDefinition());
    const res = await t.rest('POST', `/circuit-adaptors/${holding.adaptorUid}/batches`, {
      token: owner.token,
      body: { inputs: Array.from({ length: 30 }, () => ({})) },
    });
    expect(res.status).toBe(200);
    const uid = res.body.payload.uid;
    await target.untilHeld(1);
    const running = await t.rest('GET', `/batches/${uid}`, { token: owner.token });
    expect(running.body.payload.counts.RUNNING).toBeGreaterThanOrEqual(1);
    expect(sum(running.body.payload.counts)).toBe(30);

    expect((await t.rest('GET', `/batches/${uid}`, { token: stranger.token })).status).toBe(403);
    expect((await t.rest('GET', `/batches/${uid}/runs`, { token: stranger.token })).status).toBe(403);
    expect((await t.rest('POST', `/batches/${uid}/cancel`, { token: stranger.token })).status).toBe(403);
    expect((await t.rest('POST', `/batches/${uid}/cancel`)).status).toBe(401);
    expect((await t.rest('GET', '/batches/00000000-0000-4000-8000-000000000000', { token: owner.token })).status).toBe(
      404,
    );
    expect((await t.rest('GET', '/batches/not-a-uid', { token: owner.token })).status).toBe(404);

    const canceled = await t.rest('POST', `/batches/${uid}/cancel`, { token: owner.token });
    expect(canceled.status).toBe(200);
    expect(canceled.body.payload.canceled_at).toEqual(expect.any(String));
    const settled = await untilSettled(uid, owner.token, 20_000);
    expect(settled.counts).toEqual({ PROVISIONED: 0, RUNNING: 0, COMPLETED: 0, EXCEPTION: 30 });
    const runs = await CircuitRun.findAll({ where: { batch_uid: uid }, attributes: ['error'] });
    expect(runs.map((run) => run.error?.code)).toEqual(Array(30).fill('Canceled'));
  } finally {
    await target.close();
  }
}, 60_000);
