import { QueryTypes } from 'sequelize';
import { testConfig, useTestApp } from './support/app';
import { makeUser, HELLO_DEFINITION, type TestUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { claimRunsToRequeue, findOverdueRuns } from '../src/runs/transitions';

const t = useTestApp();
const DEADLINE_S = testConfig().runDeadlineSeconds;
const YEAR_S = 31_536_000;

interface RunRow {
  state: string;
  parked_at: Date | null;
  wake_at: Date | null;
  enqueued_at: Date | null;
  deadline_at: Date;
  created_at: Date;
  credits_held: string;
  error: { code: string } | null;
}

async function row(uid: string): Promise<RunRow> {
  const [found] = await t.app.services.sequelize.query<RunRow>(
    'SELECT state, parked_at, wake_at, enqueued_at, deadline_at, created_at, credits_held, error FROM circuit_runs WHERE uid = $1',
    { bind: [uid], type: QueryTypes.SELECT },
  );
  return found;
}

/** Jobs of the run in the job store (the PostgreSQL store the test app uses). */
async function jobsOf(uid: string): Promise<number> {
  const [{ count }] = await t.app.services.sequelize.query<{ count: string }>(
    `SELECT count(*) AS count FROM agenda_jobs WHERE data->>'runUid' = $1`,
    { bind: [uid], type: QueryTypes.SELECT },
  );
  return Number(count);
}

async function balance(user: TestUser): Promise<{ credits: number; credits_held: number }> {
  const me = await t.rest('GET', '/users/me', { token: user.token });
  return { credits: Number(me.body.payload.credits), credits_held: Number(me.body.payload.credits_held) };
}

const near = (actual: Date, expectedMs: number, toleranceMs = 10_000) =>
  expect(Math.abs(actual.getTime() - expectedMs)).toBeLessThan(toleranceMs);

test('delay_s 3600: answered PROVISIONED, parked with wake_at an hour ahead and its deadline counted from then, never queued; cancel ends it Canceled and releases its credit', async () => {
  const owner = await makeUser({ credits: 10 });
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const asked = Date.now();
  const res = await submitRun(t, owner.token, hello.adaptorUid, { input: { name: 'later' }, delay_s: 3600 });
  expect(res.status).toBe(200);
  expect(res.body.payload).toMatchObject({ state: 'PROVISIONED' });
  const uid = res.body.payload.uid as string;

  const created = await row(uid);
  expect(created.state).toBe('PROVISIONED');
  expect(created.parked_at).not.toBeNull();
  near(created.parked_at!, asked);
  near(created.wake_at!, asked + 3600_000);
  expect(created.deadline_at.getTime() - created.wake_at!.getTime()).toBe(DEADLINE_S * 1000);
  expect(created.enqueued_at).toBeNull();
  expect(Number(created.credits_held)).toBe(1);
  expect(await jobsOf(uid)).toBe(0);
  expect(await balance(owner)).toEqual({ credits: 10, credits_held: 1 });

  // The run as GET shows it says when it starts.
  const shown = await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token });
  expect(shown.body.payload).toMatchObject({ state: 'PROVISIONED', start_at: created.wake_at!.toISOString() });

  // The worker is at work: a run sent after it completes (and the worker's sweeps pass), while the delayed one stays as it was.
  const now = await submitRun(t, owner.token, hello.adaptorUid, { input: { name: 'now' } });
  const done = await waitForRun(t, now.body.payload.uid, owner.token);
  expect(done.state).toBe('COMPLETED');
  expect(done).not.toHaveProperty('start_at');
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const after = await row(uid);
  expect(after).toMatchObject({ state: 'PROVISIONED', enqueued_at: null });
  expect(after.parked_at).not.toBeNull();
  expect(await jobsOf(uid)).toBe(0);

  // Neither sweeper touches a parked run: not queued again however long ago it was created, not ended past its deadline.
  const sequelize = t.app.services.sequelize;
  await sequelize.query(
    `UPDATE circuit_runs SET created_at = now() - interval '2 hours', deadline_at = now() - interval '1 hour' WHERE uid = $1`,
    { bind: [uid] },
  );
  expect(await claimRunsToRequeue(sequelize, 0, 0, 10_000)).not.toContain(uid);
  const overdue = await findOverdueRuns(sequelize, DEADLINE_S, 0, 0, 10_000);
  expect(overdue.map((run) => run.uid)).not.toContain(uid);
  expect((await row(uid)).enqueued_at).toBeNull();

  const canceled = await t.rest('POST', `/circuit-runs/${uid}/cancel`, { token: owner.token });
  expect(canceled.status).toBe(200);
  expect(canceled.body.payload).toMatchObject({ state: 'EXCEPTION', error: { code: 'Canceled' } });
  expect(canceled.body.payload).not.toHaveProperty('start_at');
  const ended = await row(uid);
  expect(ended).toMatchObject({ state: 'EXCEPTION', error: { code: 'Canceled' } });
  // The hold is released: the canceled run paid its base credit, as any canceled run, and the completed one its own.
  expect(await balance(owner)).toEqual({ credits: 8, credits_held: 0 });
});

test('start_at: the run wakes at that instant, as sent with an offset', async () => {
  const owner = await makeUser();
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const at = new Date(Math.floor(Date.now() / 1000) * 1000 + 2 * 86_400_000);
  const offset = at.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const withOffset = new Date(at.getTime() + 2 * 3600_000).toISOString().replace(/\.\d{3}Z$/, '+02:00');
  for (const sent of [offset, withOffset]) {
    const res = await submitRun(t, owner.token, hello.adaptorUid, { input: { name: 'x' }, start_at: sent });
    expect(res.status).toBe(200);
    const created = await row(res.body.payload.uid);
    expect(created.wake_at!.getTime()).toBe(at.getTime());
    expect(created.deadline_at.getTime()).toBe(at.getTime() + DEADLINE_S * 1000);
    expect(created.parked_at).not.toBeNull();
    expect(created.enqueued_at).toBeNull();
    expect(await jobsOf(res.body.payload.uid)).toBe(0);
  }
});

test('refused with 400 BadClientData naming the field: both, start_at past, unparseable or over a year ahead, delay_s 0, 31536001 or "abc"; nothing is created', async () => {
  const owner = await makeUser();
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const refused = async (body: Record<string, unknown>, field: string) => {
    const res = await submitRun(t, owner.token, hello.adaptorUid, { input: { name: 'x' }, ...body });
    expect({ body, status: res.status, code: res.body.error?.code }).toEqual({
      body,
      status: 400,
      code: 'BadClientData',
    });
    expect(res.body.error.message).toMatch(new RegExp(`^${field}\\b`));
  };
  const future = new Date(Date.now() + 3600_000).toISOString();
  await refused({ start_at: future, delay_s: 60 }, 'start_at');
  await refused({ start_at: new Date(Date.now() - 60_000).toISOString() }, 'start_at');
  await refused({ start_at: 'tomorrow' }, 'start_at');
  await refused({ start_at: '2030-02-30T00:00:00Z' }, 'start_at');
  await refused({ start_at: new Date(Date.now() + (YEAR_S + 3600) * 1000).toISOString() }, 'start_at');
  await refused({ delay_s: 0 }, 'delay_s');
  await refused({ delay_s: YEAR_S + 1 }, 'delay_s');
  await refused({ delay_s: 'abc' }, 'delay_s');
  await refused({ delay_s: 1.5 }, 'delay_s');
  // The bounds themselves are taken.
  expect((await submitRun(t, owner.token, hello.adaptorUid, { input: { name: 'x' }, delay_s: YEAR_S })).status).toBe(
    200,
  );
  expect((await submitRun(t, owner.token, hello.adaptorUid, { input: { name: 'x' }, delay_s: 1 })).status).toBe(200);

  // The same checks through GraphQL, which the service makes (the REST edge is only the first of them).
  const gql = async (args: string) =>
    t.gql(
      `mutation($a: ID!) { queryCircuitAdaptor(adaptorUid: $a, input: {name: "x"}, ${args}) { uid } }`,
      { a: hello.adaptorUid },
      owner.token,
    );
  for (const [args, field] of [
    ['delaySeconds: 0', 'delay_s'],
    [`delaySeconds: ${YEAR_S + 1}`, 'delay_s'],
    [`startAt: "${new Date(Date.now() - 60_000).toISOString()}"`, 'start_at'],
    ['startAt: "not a time"', 'start_at'],
    [`startAt: "${new Date(Date.now() + (YEAR_S + 3600) * 1000).toISOString()}"`, 'start_at'],
    [`startAt: "${future}", delaySeconds: 60`, 'start_at'],
  ]) {
    const res = await gql(args);
    expect({ args, code: res.code }).toEqual({ args, code: 'BadClientData' });
    expect(res.errors![0].message).toMatch(new RegExp(`^${field}\\b`));
  }
  const [{ count }] = await t.app.services.sequelize.query<{ count: string }>(
    'SELECT count(*) AS count FROM circuit_runs WHERE user_uid = $1',
    { bind: [owner.user.uid], type: QueryTypes.SELECT },
  );
  expect(Number(count)).toBe(2);
});

test('GraphQL startAt and delaySeconds on queryCircuitAdaptor and createCircuitBatch; the run shows its startAt', async () => {
  const owner = await makeUser();
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const at = new Date(Math.floor(Date.now() / 1000) * 1000 + 86_400_000);
  const byInstant = await t.gql(
    'mutation($a: ID!, $s: String) { queryCircuitAdaptor(adaptorUid: $a, input: {name: "x"}, startAt: $s) { uid state startAt } }',
    { a: hello.adaptorUid, s: at.toISOString() },
    owner.token,
  );
  expect(byInstant.errors).toBeUndefined();
  expect(byInstant.data.queryCircuitAdaptor).toMatchObject({ state: 'PROVISIONED', startAt: at.toISOString() });
  expect((await row(byInstant.data.queryCircuitAdaptor.uid)).wake_at!.getTime()).toBe(at.getTime());

  const asked = Date.now();
  const byDelay = await t.gql(
    'mutation($a: ID!) { queryCircuitAdaptor(adaptorUid: $a, input: {name: "x"}, delaySeconds: 120) { uid state startAt } }',
    { a: hello.adaptorUid },
    owner.token,
  );
  expect(byDelay.errors).toBeUndefined();
  const delayed = await row(byDelay.data.queryCircuitAdaptor.uid);
  near(delayed.wake_at!, asked + 120_000);
  expect(delayed).toMatchObject({ state: 'PROVISIONED', enqueued_at: null });
  expect(new Date(byDelay.data.queryCircuitAdaptor.startAt).getTime()).toBe(delayed.wake_at!.getTime());

  const batch = await t.gql(
    'mutation($a: ID!) { createCircuitBatch(adaptorUid: $a, inputs: [{name: "a"}, {name: "b"}], delaySeconds: 300) { uid counts { PROVISIONED } } }',
    { a: hello.adaptorUid },
    owner.token,
  );
  expect(batch.errors).toBeUndefined();
  expect(batch.data.createCircuitBatch.counts.PROVISIONED).toBe(2);
  const runs = await t.app.services.sequelize.query<{ uid: string; wake_at: Date; enqueued_at: Date | null }>(
    'SELECT uid, wake_at, enqueued_at FROM circuit_runs WHERE batch_uid = $1',
    { bind: [batch.data.createCircuitBatch.uid], type: QueryTypes.SELECT },
  );
  expect(runs).toHaveLength(2);
  for (const run of runs) {
    near(run.wake_at, asked + 300_000);
    expect(run.enqueued_at).toBeNull();
  }
  const refused = await t.gql(
    'mutation($a: ID!) { createCircuitBatch(adaptorUid: $a, inputs: [{name: "a"}], delaySeconds: 0) { uid } }',
    { a: hello.adaptorUid },
    owner.token,
  );
  expect(refused.code).toBe('BadClientData');
  expect(refused.errors![0].message).toMatch(/^delay_s\b/);
});

test('a batch with start_at: every run parked until then and not queued, its credits held; 400 naming start_at when in the past; the batch cancels', async () => {
  const owner = await makeUser({ credits: 10 });
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const at = new Date(Math.floor(Date.now() / 1000) * 1000 + 3 * 3600_000);
  const res = await t.rest('POST', `/circuit-adaptors/${hello.adaptorUid}/batches`, {
    token: owner.token,
    body: { inputs: [{ name: 'a' }, { name: 'b' }, { name: 'c' }], start_at: at.toISOString() },
  });
  expect(res.status).toBe(200);
  expect(res.body.payload.counts).toEqual({ PROVISIONED: 3, RUNNING: 0, COMPLETED: 0, EXCEPTION: 0 });
  const batchUid = res.body.payload.uid as string;
  const page = await t.rest('GET', `/batches/${batchUid}/runs`, { token: owner.token });
  expect(page.body.data).toHaveLength(3);
  for (const run of page.body.data) {
    expect(run).toMatchObject({ state: 'PROVISIONED', start_at: at.toISOString() });
    const stored = await row(run.uid);
    expect(stored.parked_at).not.toBeNull();
    expect(stored.wake_at!.getTime()).toBe(at.getTime());
    expect(stored.deadline_at.getTime()).toBe(at.getTime() + DEADLINE_S * 1000);
    expect(stored.enqueued_at).toBeNull();
    expect(await jobsOf(run.uid)).toBe(0);
  }
  expect(await balance(owner)).toEqual({ credits: 10, credits_held: 3 });

  expect((await t.rest('GET', `/batches/${batchUid}`, { token: owner.token })).body.payload.counts.PROVISIONED).toBe(3);

  const past = await t.rest('POST', `/circuit-adaptors/${hello.adaptorUid}/batches`, {
    token: owner.token,
    body: { inputs: [{ name: 'a' }], start_at: new Date(Date.now() - 1000).toISOString() },
  });
  expect(past.status).toBe(400);
  expect(past.body.error.code).toBe('BadClientData');
  expect(past.body.error.message).toMatch(/^start_at/);
  const both = await t.rest('POST', `/circuit-adaptors/${hello.adaptorUid}/batches`, {
    token: owner.token,
    body: { inputs: [{ name: 'a' }], start_at: at.toISOString(), delay_s: 10 },
  });
  expect(both.status).toBe(400);
  expect(both.body.error.message).toMatch(/^start_at\b/);

  const canceled = await t.rest('POST', `/batches/${batchUid}/cancel`, { token: owner.token });
  expect(canceled.status).toBe(200);
  expect(canceled.body.payload.counts).toEqual({ PROVISIONED: 0, RUNNING: 0, COMPLETED: 0, EXCEPTION: 3 });
  expect((await balance(owner)).credits_held).toBe(0);
});

test('an Idempotency-Key replays a delayed query sent again, with its start_at, and refuses another delay (422)', async () => {
  const owner = await makeUser();
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const body = { input: { name: 'x' }, delay_s: 600 };
  const first = await submitRun(t, owner.token, hello.adaptorUid, body, { 'Idempotency-Key': 'delayed-1' });
  expect(first.status).toBe(200);
  const again = await submitRun(t, owner.token, hello.adaptorUid, body, {
    'Idempotency-Key': 'delayed-1',
    Prefer: 'wait=1',
  });
  expect(again.status).toBe(200);
  expect(again.body.payload).toMatchObject({ uid: first.body.payload.uid, state: 'PROVISIONED' });
  expect(new Date(again.body.payload.start_at).getTime()).toBe((await row(first.body.payload.uid)).wake_at!.getTime());
  const other = await submitRun(
    t,
    owner.token,
    hello.adaptorUid,
    { ...body, delay_s: 601 },
    { 'Idempotency-Key': 'delayed-1' },
  );
  expect(other.status).toBe(422);
  expect(other.body.error.code).toBe('IdempotencyKeyReused');
  const instead = await submitRun(
    t,
    owner.token,
    hello.adaptorUid,
    { input: { name: 'x' } },
    { 'Idempotency-Key': 'delayed-1' },
  );
  expect(instead.status).toBe(422);
});

test('a signal sent before a delayed run starts is kept: the run stays parked until its start, then consumes it', async () => {
  const owner = await makeUser();
  const waits = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [
      { id: 'reply', kind: 'wait', for: 'signal' },
      { id: 'after', kind: 'transform', expression: '{"got": steps.reply.output}' },
    ],
    output: 'steps.after.output',
  });
  const res = await submitRun(t, owner.token, waits.adaptorUid, { input: {}, delay_s: 3600 });
  const uid = res.body.payload.uid as string;
  const early = await t.rest('POST', `/circuit-runs/${uid}/signals/reply`, {
    token: owner.token,
    body: { data: { early: true } },
  });
  expect(early.status).toBe(200);
  const kept = await row(uid);
  expect(kept).toMatchObject({ state: 'PROVISIONED', enqueued_at: null });
  expect(kept.parked_at).not.toBeNull();
  expect(await jobsOf(uid)).toBe(0);

  // Its start comes: the worker's sweep wakes it, and the wait finds its signal already there.
  await t.app.services.sequelize.query('UPDATE circuit_runs SET wake_at = now() WHERE uid = $1', { bind: [uid] });
  const done = await waitForRun(t, uid, owner.token);
  expect(done.state).toBe('COMPLETED');
  expect(done.result_blob.output).toEqual({ got: { early: true } });
});
