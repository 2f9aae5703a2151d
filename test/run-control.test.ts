import type { TestApp } from './support/app';
import { HELLO_DEFINITION, TestUser } from './support/factories';
import { makeRunnableCircuit, readSse, submitRun, waitForRun } from './support/run-factories';
import { workerOnDemand } from './support/worker-on-demand';
import { CircuitRun } from '../src/models/CircuitRun';
import { CreditLedger } from '../src/models/CreditLedger';

jest.setTimeout(60_000);

const setup = workerOnDemand((req, res) => {
  if (req.url === '/nul') res.writeHead(200, { 'content-type': 'application/json' }).end('{"text": "a\\u0000b"}');
  else if (req.url === '/surrogate')
    res.writeHead(200, { 'content-type': 'application/json' }).end('["ok", "\\ud800"]');
  else return false;
  return true;
});
const { held, startWorker, holdDefinition, untilHeld } = setup;
let t: TestApp;
let owner: TestUser;
let other: TestUser;
beforeAll(() => ({ t, owner, other } = setup));

const chargesOf = async (uid: string) =>
  (await CreditLedger.findAll({ where: { run_uid: uid } })).map((row) => Math.abs(Number(row.amount)));

describe('cancel', () => {
  test('a PROVISIONED run ends at once: EXCEPTION Canceled, charged the base credit, via REST and GraphQL', async () => {
    const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const first = await submitRun(t, owner.token, adaptorUid, { input: { name: 'x' } });
    const res = await t.rest('POST', `/circuit-runs/${first.body.payload.uid}/cancel`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.payload).toMatchObject({
      uid: first.body.payload.uid,
      state: 'EXCEPTION',
      error: { code: 'Canceled', message: expect.any(String) },
    });
    expect(res.body.payload.ended_at).toEqual(expect.any(String));
    expect(await chargesOf(first.body.payload.uid)).toEqual([1]);

    const second = await submitRun(t, owner.token, adaptorUid, { input: { name: 'y' } });
    const gql = await t.gql(
      'mutation($u: ID!) { cancelCircuitRun(uid: $u) { state error { code } } }',
      { u: second.body.payload.uid },
      owner.token,
    );
    expect(gql.data).toEqual({ cancelCircuitRun: { state: 'EXCEPTION', error: { code: 'Canceled' } } });
  });

  test('owner only: 401 anonymous, 403 someone else (even on a public run), 404 unknown or malformed; same codes in GraphQL', async () => {
    const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const { body } = await submitRun(t, owner.token, adaptorUid, { input: { name: 'x' }, is_public: true });
    const uid = body.payload.uid;
    const cancel = (u: string, token?: string) => t.rest('POST', `/circuit-runs/${u}/cancel`, { token });
    expect((await cancel(uid)).status).toBe(401);
    expect([(await cancel(uid, other.token)).status, (await cancel(uid, other.token)).body.error.code]).toEqual([
      403,
      'NotAllowed',
    ]);
    expect((await cancel(uid, 'cst_invalid')).status).toBe(401);
    for (const u of ['00000000-0000-4000-8000-000000000000', 'nope'])
      expect((await cancel(u, owner.token)).body.error.code).toBe('NotFound');
    const mutation = 'mutation($u: ID!) { cancelCircuitRun(uid: $u) { state } }';
    expect((await t.gql(mutation, { u: uid })).code).toBe('Unauthorized');
    expect((await t.gql(mutation, { u: uid }, other.token)).code).toBe('NotAllowed');
    expect((await t.gql(mutation, { u: 'nope' }, owner.token)).code).toBe('NotFound');
    const run = await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token });
    expect(run.body.payload.state).toBe('PROVISIONED');
  });

  test('a terminal run is answered as it is, unchanged', async () => {
    await startWorker();
    const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const { body } = await submitRun(t, owner.token, adaptorUid, { input: { name: 'done' } });
    const done = await waitForRun(t, body.payload.uid, owner.token);
    const res = await t.rest('POST', `/circuit-runs/${body.payload.uid}/cancel`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.payload).toEqual(done);
    expect(done.state).toBe('COMPLETED');
  });

  test('a RUNNING run has its in-flight http step aborted and ends EXCEPTION Canceled; the events show it', async () => {
    await startWorker();
    const { adaptorUid } = await makeRunnableCircuit(owner, holdDefinition());
    const before = held.length;
    const { body } = await submitRun(t, owner.token, adaptorUid, { input: {} });
    await untilHeld(before + 1);
    // The answer waits for the run to end (up to 5 s): it shows Canceled only because the held request was aborted.
    const res = await t.rest('POST', `/circuit-runs/${body.payload.uid}/cancel`, { token: owner.token });
    expect(res.body.payload).toMatchObject({ state: 'EXCEPTION', error: { code: 'Canceled' } });
    expect(held[before].destroyed || held[before].writableEnded || held[before].req.destroyed).toBe(true);
    expect(await chargesOf(body.payload.uid)).toEqual([1]);
    const events = await readSse(`${t.url}/api/v1/circuit-runs/${body.payload.uid}/events`, {
      token: owner.token,
      headers: { 'last-event-id': '0' },
    });
    expect(events.events.map((e) => JSON.parse(e.data!).state)).toEqual(['PROVISIONED', 'RUNNING', 'EXCEPTION']);
    expect(JSON.parse(events.events[2].data!).error.code).toBe('Canceled');
    const steps = await readSse(`${t.url}/api/v1/circuit-runs/${body.payload.uid}/events?events=step`, {
      token: owner.token,
      headers: { 'last-event-id': '0' },
    });
    expect(steps.events.map((e) => JSON.parse(e.data!).status)).toEqual(['started', 'failed']);
  });
});

describe('deadlines', () => {
  test('deadline_s outside 1–3600 is 400 naming the field; GraphQL deadlineSeconds the same', async () => {
    const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    for (const deadline_s of [0, 3601, -5]) {
      const res = await submitRun(t, owner.token, adaptorUid, { input: { name: 'x' }, deadline_s });
      expect([res.status, res.body.error.code]).toEqual([400, 'BadClientData']);
      expect(res.body.error.message).toContain('deadline_s');
    }
    const gql = await t.gql(
      'mutation($a: ID!) { queryCircuitAdaptor(adaptorUid: $a, input: {name: "x"}, deadlineSeconds: 0) { uid } }',
      { a: adaptorUid },
      owner.token,
    );
    expect(gql.code).toBe('BadClientData');
  });

  test('a run past its deadline_s is stopped by its worker: EXCEPTION DeadlineExceeded', async () => {
    await startWorker();
    const { adaptorUid } = await makeRunnableCircuit(owner, holdDefinition());
    const before = held.length;
    const { body } = await submitRun(t, owner.token, adaptorUid, { input: {}, deadline_s: 1 });
    await untilHeld(before + 1);
    const run = await waitForRun(t, body.payload.uid, owner.token, 10_000);
    expect(run).toMatchObject({
      state: 'EXCEPTION',
      error: { code: 'DeadlineExceeded', message: expect.stringContaining('1 s') },
    });
    const ms = Date.parse(run.ended_at) - Date.parse(run.created_at);
    expect(ms).toBeGreaterThanOrEqual(900);
  });
});

describe('Prefer: wait', () => {
  test('Prefer: wait answers the run as GET shows it once COMPLETED, with Preference-Applied', async () => {
    await startWorker();
    const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const res = await submitRun(t, owner.token, adaptorUid, { input: { name: 'Ada' } }, { Prefer: 'wait' });
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('wait=60');
    expect(res.body.payload.state).toBe('COMPLETED');
    const get = await t.rest('GET', `/circuit-runs/${res.body.payload.uid}`, { token: owner.token });
    expect(res.body.payload).toEqual(get.body.payload);
    expect(res.body.payload.result_blob.output).toBe('HELLO ADA');
  });

  test('Prefer: wait=N answers after N s when the run is still in flight; without the header nothing changes', async () => {
    await startWorker();
    const { adaptorUid } = await makeRunnableCircuit(owner, holdDefinition());
    const started = Date.now();
    const res = await submitRun(t, owner.token, adaptorUid, { input: {} }, { Prefer: 'respond-async, wait=1' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(res.headers.get('preference-applied')).toBe('wait=1');
    expect(['PROVISIONED', 'RUNNING']).toContain(res.body.payload.state);
    expect(res.body.payload).not.toHaveProperty('ended_at');
    expect(res.body.payload.document_type).toBe('circuit_run');
    const plain = await submitRun(t, owner.token, adaptorUid, { input: {} });
    expect(Object.keys(plain.body.payload).sort()).toEqual(['is_public', 'state', 'uid']);
    expect(plain.headers.get('preference-applied')).toBeNull();
    const gql = await t.gql(
      'mutation($a: ID!) { queryCircuitAdaptor(adaptorUid: $a, input: {}, waitSeconds: 61) { uid } }',
      { a: adaptorUid },
      owner.token,
    );
    expect(gql.code).toBe('BadClientData');
  });

  test('GraphQL waitSeconds answers the finished run', async () => {
    await startWorker();
    const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const gql = await t.gql(
      'mutation($a: ID!) { queryCircuitAdaptor(adaptorUid: $a, input: {name: "Bo"}, waitSeconds: 30) { state resultBlob } }',
      { a: adaptorUid },
      owner.token,
    );
    expect(gql.data).toEqual({
      queryCircuitAdaptor: { state: 'COMPLETED', resultBlob: expect.objectContaining({ output: 'HELLO BO' }) },
    });
  });
});

describe('outputs PostgreSQL cannot store', () => {
  test.each([
    ['nul', 'NUL'],
    ['surrogate', 'lone surrogate'],
  ])(
    'a step output with a %s character ends the run EXCEPTION at once (attempt 1), naming the step',
    async (path, words) => {
      await startWorker();
      const { adaptorUid } = await makeRunnableCircuit(owner, {
        query_schema: { type: 'object' },
        steps: [{ id: 'fetch', kind: 'http', method: 'GET', url: `${setup.target.url}/${path}` }],
      });
      const { body } = await submitRun(t, owner.token, adaptorUid, { input: {} });
      const run = await waitForRun(t, body.payload.uid, owner.token, 10_000);
      expect(run).toMatchObject({
        state: 'EXCEPTION',
        error: { code: 'StepFailed', step_id: 'fetch', message: expect.stringContaining(words) },
      });
      expect((await CircuitRun.findByPk(body.payload.uid))!.attempt).toBe(1);
      expect(await chargesOf(body.payload.uid)).toEqual([1]);
    },
  );
});
