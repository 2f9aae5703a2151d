import { QueryTypes } from 'sequelize';
import type { RunStateEvent } from '../src/runs/events/bus';
import { CircuitRun } from '../src/models/CircuitRun';
import { useTestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { addWaitingStep, makeWaitingRun, stepRow } from './support/approval-factories';

/**
 * Approval steps, the API side: POST /circuit-runs/{uid}/approvals/{step_id} and
 * GraphQL resolveApproval record a person's decision on a waiting step and wake the run's worker;
 * `waiting_for` shows the owner what a run waits on. The engine is not involved: the waiting state
 * is made in SQL as the engine leaves it (test/support/approval-factories.ts).
 */

const NO_SUCH_UID = '00000000-0000-4000-8000-000000000000';
const RESOLVE = `mutation($runUid: ID!, $stepId: String!, $approved: Boolean!, $comment: String, $data: JSON) {
  resolveApproval(runUid: $runUid, stepId: $stepId, approved: $approved, comment: $comment, data: $data) {
    uid state waitingFor { stepId prompt expiresAt }
  }
}`;
const READ = 'query($uid: ID!) { circuitRun(uid: $uid) { uid state waitingFor { stepId prompt expiresAt } } }';

const t = useTestApp();
let owner: TestUser;
let other: TestUser;

beforeAll(async () => {
  [owner, other] = await Promise.all([makeUser(), makeUser()]);
});

const approve = (uid: string, stepId: string, body: unknown, as: { token?: string } = { token: owner.token }) =>
  t.rest('POST', `/circuit-runs/${uid}/approvals/${encodeURIComponent(stepId)}`, { token: as.token, body });

/** Messages the bus delivers for `uid` from now on. */
function listen(uid: string) {
  const heard: RunStateEvent[] = [];
  const stop = t.app.runtime.bus.subscribe(uid, (event) => heard.push(event));
  return {
    heard,
    stop,
    async wake(timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (!heard.some((event) => event.wake) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      return heard.filter((event) => event.wake);
    },
  };
}

describe('REST', () => {
  test('approve: 200 with the run as GET shows it, the decision on the row, a wake message; the same again is 200, a different one 409', async () => {
    const { run, stepId } = await makeWaitingRun(owner, { prompt: 'Deploy to production?' });
    const before = await t.rest('GET', `/circuit-runs/${run.uid}`, { token: owner.token });
    expect(before.status).toBe(200);
    expect(before.body.payload.waiting_for).toEqual([
      {
        step_id: stepId,
        kind: 'approval',
        prompt: 'Deploy to production?',
        expires_at: expect.any(String),
        decision_url: expect.stringMatching(/\/decisions\//),
      },
    ]);
    const { updated_at: touchedBefore } = (await CircuitRun.findByPk(run.uid))!;

    const bus = listen(run.uid);
    const res = await approve(run.uid, stepId, { approved: true, comment: 'looks good', data: { ticket: 42 } });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('success');
    expect(res.body.payload).toMatchObject({ uid: run.uid, state: 'RUNNING', user_uid: owner.user.uid });
    // Nothing waits any more: the field is absent, not null.
    expect(res.body.payload).not.toHaveProperty('waiting_for');
    const get = await t.rest('GET', `/circuit-runs/${run.uid}`, { token: owner.token });
    expect(res.body.payload).toEqual(get.body.payload);

    const row = await stepRow(run.uid, stepId);
    expect(row).toMatchObject({
      kind: 'approval',
      status: 'approved',
      decision: { approved: true, comment: 'looks good', data: { ticket: 42 }, resolved_at: expect.any(String) },
    });
    expect(new Date(row!.decision.resolved_at).toISOString()).toBe(row!.decision.resolved_at);
    // The run row changed in the same statement (what keeps cached reads honest).
    expect((await CircuitRun.findByPk(run.uid))!.updated_at.getTime()).toBeGreaterThan(touchedBefore.getTime());
    expect(await bus.wake()).toEqual([{ uid: run.uid, wake: true }]);

    // The same decision again: the run as it is, nothing recorded anew, no second wake.
    const again = await approve(run.uid, stepId, { approved: true, comment: 'another comment' });
    expect(again.status).toBe(200);
    expect(again.body.payload).toEqual(get.body.payload);
    expect((await stepRow(run.uid, stepId))!.decision).toEqual(row!.decision);

    const different = await approve(run.uid, stepId, { approved: false });
    expect(different.status).toBe(409);
    expect(different.body.error).toEqual({ code: 'Conflict', message: expect.stringContaining('already approved') });
    expect((await stepRow(run.uid, stepId))!.status).toBe('approved');
    // A marker published now is heard after any wake the repeated decisions published (each publish is
    // awaited before its answer, and the bus delivers in order): once it is heard, the count of wakes is final.
    await t.app.runtime.bus.publish({ uid: run.uid });
    const deadline = Date.now() + 5_000;
    const markerHeard = () => bus.heard.some((event) => Object.keys(event).length === 1);
    while (!markerHeard() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(markerHeard()).toBe(true);
    expect(bus.heard.filter((event) => event.wake)).toHaveLength(1);
    bus.stop();
  });

  test('reject records approved false (comment and data optional); approving it afterwards is 409', async () => {
    const { run, stepId } = await makeWaitingRun(owner);
    const res = await approve(run.uid, stepId, { approved: false });
    expect(res.status).toBe(200);
    expect(await stepRow(run.uid, stepId)).toMatchObject({
      status: 'rejected',
      decision: { approved: false, comment: null, data: null },
    });
    expect((await approve(run.uid, stepId, { approved: false })).status).toBe(200);
    expect((await approve(run.uid, stepId, { approved: true })).body.error.code).toBe('Conflict');
  });

  test('409 Conflict: an unknown step, a step that is not an approval, an expired one, a run that is not RUNNING', async () => {
    const { run, stepId } = await makeWaitingRun(owner);
    const unknown = await approve(run.uid, 'no-such-step', { approved: true });
    expect(unknown.status).toBe(409);
    expect(unknown.body.error).toEqual({ code: 'Conflict', message: expect.stringContaining('"no-such-step"') });
    expect((await approve(run.uid, 'bad\u0000id', { approved: true })).status).toBe(409);

    await CircuitRun.sequelize!.query(
      `INSERT INTO circuit_run_steps (run_uid, path, kind, status, attempt, output, started_at, ended_at) VALUES ($1, 'fetch', 'http', 'completed', 1, '{}', now(), now())`,
      { bind: [run.uid] },
    );
    const notApproval = await approve(run.uid, 'fetch', { approved: true });
    expect(notApproval.status).toBe(409);
    expect(notApproval.body.error.message).toContain('not an approval step');

    await addWaitingStep(run.uid, 'late', 'Too late?', -1);
    const expired = await approve(run.uid, 'late', { approved: true });
    expect(expired.status).toBe(409);
    expect(expired.body.error.message).toContain('expired');
    expect((await stepRow(run.uid, 'late'))!.status).toBe('waiting');

    // The run ended meanwhile (the engine's business): its waiting row can no longer be decided.
    await CircuitRun.sequelize!.query(
      `UPDATE circuit_runs SET state = 'EXCEPTION', ended_at = now(), error = '{"code":"Canceled","message":"Canceled"}' WHERE uid = $1`,
      { bind: [run.uid] },
    );
    const ended = await approve(run.uid, stepId, { approved: true });
    expect(ended.status).toBe(409);
    expect(ended.body.error.message).toContain('EXCEPTION');
    expect((await stepRow(run.uid, stepId))!.status).toBe('waiting');
  });

  test('owner only: 401 without a token, 403 for another user (a public run too), 404 for an unknown run', async () => {
    const { run, stepId } = await makeWaitingRun(owner, { isPublic: true });
    expect((await approve(run.uid, stepId, { approved: true }, {})).status).toBe(401);
    const foreign = await approve(run.uid, stepId, { approved: true }, other);
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('NotAllowed');
    const { run: privateRun } = await makeWaitingRun(owner);
    expect((await approve(privateRun.uid, stepId, { approved: true }, other)).status).toBe(403);
    expect((await approve(NO_SUCH_UID, stepId, { approved: true })).status).toBe(404);
    expect((await approve('not-a-uid', stepId, { approved: true })).status).toBe(404);
    expect((await stepRow(run.uid, stepId))!.status).toBe('waiting');
  });

  test('400 BadClientData naming the field: comment over 2000 characters, data over 64 KiB or not an object, approved missing', async () => {
    const { run, stepId } = await makeWaitingRun(owner);
    const cases: [unknown, string][] = [
      [{ approved: true, comment: 'x'.repeat(2001) }, 'comment'],
      [{ approved: true, data: { blob: 'x'.repeat(64 * 1024) } }, 'data'],
      [{ approved: true, data: [1, 2] }, 'data'],
      [{ approved: true, data: 'text' }, 'data'],
      [{ comment: 'no decision' }, 'approved'],
      [{ approved: 'yes' }, 'approved'],
      [{ approved: true, extra: 1 }, 'extra'],
      [{ approved: true, comment: 'nul \u0000 here' }, 'comment'],
    ];
    for (const [body, field] of cases) {
      const res = await approve(run.uid, stepId, body);
      expect({ field, status: res.status, code: res.body.error?.code }).toEqual({
        field,
        status: 400,
        code: 'BadClientData',
      });
      expect(res.body.error.message).toContain(field);
    }
    // At the limits exactly: accepted.
    const res = await approve(run.uid, stepId, {
      approved: true,
      comment: '€'.repeat(2000),
      data: { blob: 'x'.repeat(64 * 1024 - 20) },
    });
    expect(res.status).toBe(200);
  });

  test('waiting_for: the owner sees every waiting step oldest first; others and anonymous readers of a public run never', async () => {
    const { run, stepId } = await makeWaitingRun(owner, { isPublic: true, prompt: 'First?' });
    await addWaitingStep(run.uid, 'second', 'Second?', 60, new Date(Date.now() + 1000));
    const mine = await t.rest('GET', `/circuit-runs/${run.uid}`, { token: owner.token });
    expect(mine.body.payload.waiting_for.map((w: any) => [w.step_id, w.prompt])).toEqual([
      [stepId, 'First?'],
      ['second', 'Second?'],
    ]);
    for (const token of [other.token, undefined]) {
      const theirs = await t.rest('GET', `/circuit-runs/${run.uid}`, { token });
      expect(theirs.status).toBe(200);
      expect(theirs.body.payload).not.toHaveProperty('waiting_for');
      expect((await t.gql(READ, { uid: run.uid }, token)).data!.circuitRun).toMatchObject({
        uid: run.uid,
        waitingFor: null,
      });
    }

    // The caller's own list carries it too (one statement for the page's runs), and the REST field stays absent for runs that wait on nothing.
    const { run: quiet } = await makeWaitingRun(owner);
    await approve(quiet.uid, 'review', { approved: true });
    const list = await t.rest('GET', '/users/circuit-runs?state=RUNNING&limit=100', { token: owner.token });
    const listed = Object.fromEntries((list.body.data as any[]).map((item) => [item.uid, item]));
    expect(listed[run.uid].waiting_for).toHaveLength(2);
    expect(listed[quiet.uid]).not.toHaveProperty('waiting_for');

    await approve(run.uid, stepId, { approved: true });
    const after = await t.rest('GET', `/circuit-runs/${run.uid}`, { token: owner.token });
    expect(after.body.payload.waiting_for).toEqual([
      {
        step_id: 'second',
        kind: 'approval',
        prompt: 'Second?',
        expires_at: expect.any(String),
        decision_url: expect.stringMatching(/\/decisions\//),
      },
    ]);
    await approve(run.uid, 'second', { approved: false });
    expect((await t.rest('GET', `/circuit-runs/${run.uid}`, { token: owner.token })).body.payload).not.toHaveProperty(
      'waiting_for',
    );
  });

  test('a run that ended shows no waiting_for, even with a waiting row left behind', async () => {
    const { run } = await makeWaitingRun(owner);
    await CircuitRun.sequelize!.query(
      `UPDATE circuit_runs SET state = 'COMPLETED', ended_at = now(), result_blob = '{}' WHERE uid = $1`,
      { bind: [run.uid] },
    );
    const res = await t.rest('GET', `/circuit-runs/${run.uid}`, { token: owner.token });
    expect(res.body.payload.state).toBe('COMPLETED');
    expect(res.body.payload).not.toHaveProperty('waiting_for');
  });
});

describe('GraphQL resolveApproval gives the same codes', () => {
  test('approve, the same again, a different decision, not waiting, foreign, anonymous, unknown, too large', async () => {
    const { run, stepId } = await makeWaitingRun(owner, { isPublic: true, prompt: 'Go?' });
    expect((await t.gql(READ, { uid: run.uid }, owner.token)).data!.circuitRun.waitingFor).toEqual([
      { stepId, prompt: 'Go?', expiresAt: expect.any(String) },
    ]);

    const bus = listen(run.uid);
    const vars = { runUid: run.uid, stepId, approved: true };
    expect(await t.gql(RESOLVE, vars)).toMatchObject({ code: 'Unauthorized' });
    expect(await t.gql(RESOLVE, vars, other.token)).toMatchObject({ code: 'NotAllowed' });
    expect(await t.gql(RESOLVE, { ...vars, runUid: NO_SUCH_UID }, owner.token)).toMatchObject({ code: 'NotFound' });
    const long = await t.gql(RESOLVE, { ...vars, comment: 'x'.repeat(2001) }, owner.token);
    expect(long).toMatchObject({ code: 'BadClientData' });
    expect(long.errors![0].message).toMatch(/^comment /);
    const large = await t.gql(RESOLVE, { ...vars, data: { blob: 'x'.repeat(65 * 1024) } }, owner.token);
    expect(large).toMatchObject({ code: 'BadClientData' });
    expect(large.errors![0].message).toMatch(/^data /);
    expect(await t.gql(RESOLVE, { ...vars, data: [1] }, owner.token)).toMatchObject({ code: 'BadClientData' });
    expect(await t.gql(RESOLVE, { ...vars, stepId: 'nope' }, owner.token)).toMatchObject({ code: 'Conflict' });
    expect((await stepRow(run.uid, stepId))!.status).toBe('waiting');

    const done = await t.gql(RESOLVE, { ...vars, data: { ok: 1 } }, owner.token);
    expect(done.errors).toBeUndefined();
    expect(done.data).toEqual({ resolveApproval: { uid: run.uid, state: 'RUNNING', waitingFor: null } });
    expect(await bus.wake()).toHaveLength(1);
    expect((await t.gql(RESOLVE, vars, owner.token)).data).toEqual(done.data);
    expect(await t.gql(RESOLVE, { ...vars, approved: false }, owner.token)).toMatchObject({ code: 'Conflict' });
    bus.stop();
  });

  test('two decisions at once: exactly one is recorded and wakes the run', async () => {
    const { run, stepId } = await makeWaitingRun(owner);
    const bus = listen(run.uid);
    const [yes, no] = await Promise.all([
      approve(run.uid, stepId, { approved: true }),
      approve(run.uid, stepId, { approved: false }),
    ]);
    expect([yes.status, no.status].sort()).toEqual([200, 409]);
    const row = await stepRow(run.uid, stepId);
    expect(row!.status).toBe(yes.status === 200 ? 'approved' : 'rejected');
    expect(await bus.wake()).toHaveLength(1);
    bus.stop();
    const [{ count }] = await CircuitRun.sequelize!.query<{ count: string }>(
      `SELECT count(*) FROM circuit_run_steps WHERE run_uid = $1 AND status <> 'waiting'`,
      { bind: [run.uid], type: QueryTypes.SELECT },
    );
    expect(Number(count)).toBe(1);
  });
});
