import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import {
  makeRunnableCircuit,
  ServiceProcess,
  spawnServiceProcess,
  submitRun,
  waitForRun,
} from './support/run-factories';
import type { CircuitDefinition } from '../src/domain/definition';
import { CircuitRun } from '../src/models/CircuitRun';
import { CreditLedger } from '../src/models/CreditLedger';

/**
 * Approval steps end to end: a run that reaches one waits (RUNNING, `waiting_for`, a
 * `waiting` step event) holding no job slot, until its owner decides through the approvals endpoint
 * or its timeout does; its deadline does not run meanwhile.
 */

jest.setTimeout(120_000);

let t: TestApp;
let owner: TestUser;
beforeAll(async () => {
  // 1,000 runs in seconds from one token: a load test, not a test of RUN_RATE_LIMIT_PER_MINUTE (test/tokens.rate-limit).
  t = await startTestApp({ runRateLimitPerMinute: 0 });
  owner = await makeUser({ credits: 5_000 });
});
afterAll(async () => {
  await t.close();
});

const gate = (extra: Record<string, unknown> = {}): CircuitDefinition => ({
  query_schema: { type: 'object', properties: { what: { type: 'string' } } },
  steps: [
    { id: 'ask', kind: 'approval', prompt: 'Ship {{input.what}}?', ...extra },
    { id: 'after', kind: 'template', template: 'shipped {{input.what}} ({{steps.ask.output.comment}})' },
  ],
  output: 'steps.after.output',
});

async function waitingRun(definition: CircuitDefinition, body: Record<string, unknown> = {}): Promise<string> {
  const { adaptorUid } = await makeRunnableCircuit(owner, definition);
  const { body: created } = await submitRun(t, owner.token, adaptorUid, { input: { what: 'v2' }, ...body });
  const uid = created.payload.uid as string;
  await untilWaiting(uid);
  return uid;
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

const decide = (uid: string, body: unknown, stepId = 'ask') =>
  t.rest('POST', `/circuit-runs/${uid}/approvals/${stepId}`, { token: owner.token, body });

async function stepEvents(uid: string): Promise<Array<Record<string, unknown>>> {
  const rows = await t.app.services.sequelize.query<{ data: Record<string, unknown> }>(
    `SELECT data FROM circuit_run_events WHERE run_uid = $1 AND kind = 'step' ORDER BY seq`,
    { bind: [uid], type: 'SELECT' as never },
  );
  return rows.map((row) => row.data);
}

test('approved: the run goes on with the decision as the step output, charged 1 credit (approvals cost nothing)', async () => {
  const uid = await waitingRun(gate());
  const waiting = await untilWaiting(uid);
  expect(waiting.state).toBe('RUNNING');
  expect(waiting.waiting_for).toEqual([
    {
      step_id: 'ask',
      kind: 'approval',
      prompt: 'Ship v2?',
      expires_at: expect.any(String),
      decision_url: expect.stringMatching(/\/decisions\//),
    },
  ]);
  let events = await stepEvents(uid);
  for (const end = Date.now() + 10_000; !events.some((e) => e.status === 'waiting') && Date.now() < end;)
    events = await stepEvents(uid);
  expect(events).toContainEqual(
    expect.objectContaining({
      step_id: 'ask',
      status: 'waiting',
      prompt: 'Ship v2?',
      expires_at: waiting.waiting_for[0].expires_at,
    }),
  );

  const res = await decide(uid, { approved: true, comment: 'go', data: { ticket: 7 } });
  expect(res.status).toBe(200);
  const run = await waitForRun(t, uid, owner.token);
  expect(run.state).toBe('COMPLETED');
  expect(run.result_blob.output).toBe('shipped v2 (go)');
  expect(run.result_blob.steps.ask.output).toEqual({
    approved: true,
    comment: 'go',
    data: { ticket: 7 },
    resolved_at: expect.any(String),
  });
  expect(run.result_blob.steps.ask.credits).toBe(0);
  expect(run.waiting_for).toBeUndefined();
  const charges = await CreditLedger.findAll({ where: { run_uid: uid } });
  expect(charges.map((c) => Number(c.amount))).toEqual([-1]);
  // The same decision again answers the same; a different one is a conflict.
  expect((await decide(uid, { approved: true, comment: 'go', data: { ticket: 7 } })).status).toBe(200);
  const conflict = await decide(uid, { approved: false });
  expect(conflict.status).toBe(409);
  expect(conflict.body.error.code).toBe('Conflict');
});

test('rejected: the run ends EXCEPTION Rejected with the comment, and a second, different decision is 409', async () => {
  const uid = await waitingRun(gate());
  expect((await decide(uid, { approved: false, comment: 'not today' })).status).toBe(200);
  expect((await decide(uid, { approved: true })).status).toBe(409);
  const run = await waitForRun(t, uid, owner.token);
  expect(run.state).toBe('EXCEPTION');
  expect(run.error).toEqual({ code: 'Rejected', step_id: 'ask', message: expect.stringContaining('not today') });
});

test('timed out: on_timeout reject ends ApprovalTimedOut, on_timeout approve goes on', async () => {
  const rejected = await waitingRun(gate({ timeout_s: 1 }));
  const approved = await waitingRun(gate({ timeout_s: 1, on_timeout: 'approve' }));
  const [r, a] = await Promise.all([waitForRun(t, rejected, owner.token), waitForRun(t, approved, owner.token)]);
  expect(r.state).toBe('EXCEPTION');
  expect(r.error.code).toBe('ApprovalTimedOut');
  expect(a.state).toBe('COMPLETED');
  expect(a.result_blob.steps.ask.output).toEqual({
    approved: true,
    comment: null,
    data: null,
    resolved_at: expect.any(String),
  });
});

test('cancel while waiting ends the run Canceled at once', async () => {
  const uid = await waitingRun(gate());
  const res = await t.rest('POST', `/circuit-runs/${uid}/cancel`, { token: owner.token });
  expect(res.status).toBe(200);
  const run = await waitForRun(t, uid, owner.token);
  expect(run.state).toBe('EXCEPTION');
  expect(run.error.code).toBe('Canceled');
  expect(run.waiting_for).toBeUndefined();
});

test('the deadline does not run while the run waits: a 1 s deadline, approved after it, still completes', async () => {
  const uid = await waitingRun(gate(), { deadline_s: 1 });
  const before = (await CircuitRun.findByPk(uid))!.deadline_at!.getTime();
  // Wait past the deadline as it was (a positive signal: the database's clock has passed it).
  for (;;) {
    const [{ past }] = await t.app.services.sequelize.query<{ past: boolean }>(
      "SELECT now() > $1::timestamptz + interval '200 milliseconds' AS past",
      { bind: [new Date(before)], type: 'SELECT' as never },
    );
    if (past) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect((await decide(uid, { approved: true })).status).toBe(200);
  const run = await waitForRun(t, uid, owner.token);
  expect(run.state).toBe('COMPLETED');
  expect((await CircuitRun.findByPk(uid))!.deadline_at!.getTime()).toBeGreaterThan(before);
});

// Its phases each wait for a positive signal within a deadline of their own (60 s for 1,000 waiting, 30 s for the
// ordinary runs, 60 s for 1,000 completed): the test's own timeout leaves room for all of them (the file's 120 s
// did not, and ended the test on a loaded runner before any phase had failed).
test('1,000 runs waiting on one worker leave it free: ordinary runs still complete, then all 1,000 are approved', async () => {
  const { adaptorUid } = await makeRunnableCircuit(owner, gate({ timeout_s: 3600 }));
  const uids: string[] = [];
  for (let i = 0; i < 1_000; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: 50 }, () => submitRun(t, owner.token, adaptorUid, { input: { what: 'x' } })),
    );
    uids.push(...batch.map((r) => r.body.payload.uid as string));
  }
  const countWaiting = async () => {
    const [{ n }] = await t.app.services.sequelize.query<{ n: string }>(
      `SELECT count(*) AS n FROM circuit_run_steps WHERE status = 'waiting' AND run_uid = ANY($1::uuid[])`,
      { bind: [uids], type: 'SELECT' as never },
    );
    return Number(n);
  };
  const deadline = Date.now() + 60_000;
  while ((await countWaiting()) < 1_000 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  expect(await countWaiting()).toBe(1_000);

  // Another user's ordinary runs go through meanwhile (their speed is measured by the bench; here: they
  // finish). The owner's own would wait: 1,000 running runs is USER_MAX_CONCURRENT_RUNS (docs/fairness.md).
  const other = await makeUser({ credits: 100 });
  const hello = await makeRunnableCircuit(other, {
    query_schema: { type: 'object' },
    steps: [{ id: 'hi', kind: 'template', template: 'hi' }],
  });
  const ordinary = await Promise.all(
    Array.from({ length: 20 }, () => submitRun(t, other.token, hello.adaptorUid, { input: {} })),
  );
  for (const r of ordinary)
    expect((await waitForRun(t, r.body.payload.uid, other.token, 30_000)).state).toBe('COMPLETED');

  for (let i = 0; i < uids.length; i += 50) {
    const answers = await Promise.all(
      uids.slice(i, i + 50).map((uid) => decide(uid, { approved: true, comment: 'ok' })),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
  }
  const finished = async () => {
    const [{ n }] = await t.app.services.sequelize.query<{ n: string }>(
      `SELECT count(*) AS n FROM circuit_runs WHERE state = 'COMPLETED' AND uid = ANY($1::uuid[])`,
      { bind: [uids], type: 'SELECT' as never },
    );
    return Number(n);
  };
  const end = Date.now() + 60_000;
  while ((await finished()) < 1_000 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 100));
  expect(await finished()).toBe(1_000);
}, 300_000);

describe('with no worker alive at the expiry moment', () => {
  let api: TestApp;
  const processes: ServiceProcess[] = [];
  beforeAll(async () => {
    api = await startTestApp({ runWorker: false });
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill('SIGKILL')));
    await api.close();
  });

  test('the timeout still decides, as soon as a worker is back', async () => {
    const user = await makeUser({ credits: 10 });
    const { adaptorUid } = await makeRunnableCircuit(user, gate({ timeout_s: 1 }));
    const worker = await spawnServiceProcess('worker', api.databaseUrl);
    processes.push(worker);
    const uid = (await submitRun(api, user.token, adaptorUid, { input: { what: 'x' } })).body.payload.uid as string;
    const deadline = Date.now() + 20_000;
    const waitingRow = async () =>
      (
        await api.app.services.sequelize.query<{ expires_at: Date }>(
          `SELECT expires_at FROM circuit_run_steps WHERE run_uid = $1 AND status = 'waiting'`,
          { bind: [uid], type: 'SELECT' as never },
        )
      )[0];
    while (!(await waitingRow()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    const { expires_at: expiresAt } = (await waitingRow())!;
    await worker.kill('SIGKILL');
    // Past the expiry with no worker at all.
    for (;;) {
      const [{ past }] = await api.app.services.sequelize.query<{ past: boolean }>(
        'SELECT now() > $1::timestamptz AS past',
        { bind: [expiresAt], type: 'SELECT' as never },
      );
      if (past) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await CircuitRun.findByPk(uid))!.state).toBe('RUNNING');
    processes.push(await spawnServiceProcess('worker', api.databaseUrl));
    const run = await waitForRun(api, uid, user.token, 60_000);
    expect(run.state).toBe('EXCEPTION');
    expect(run.error.code).toBe('ApprovalTimedOut');
  });
});
