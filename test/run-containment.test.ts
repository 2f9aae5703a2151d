import type { IncomingMessage, ServerResponse } from 'node:http';
import { QueryTypes } from 'sequelize';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import {
  makeRunnableCircuit,
  ServiceProcess,
  spawnServiceProcess,
  startHttpTarget,
  submitRun,
  waitForRun,
} from './support/run-factories';
import { sleep, until } from './support/wait';
import { CircuitRun } from '../src/models/CircuitRun';
import { CreditLedger } from '../src/models/CreditLedger';

jest.setTimeout(240_000);

/**
 * Runs executing in real worker processes (dist/src/worker.js, JOB_LOCK_LIFETIME_MS=2000) that the
 * tests kill (SIGKILL), freeze (SIGSTOP) or leave running; this process only serves the API.
 */
let t: TestApp;
let owner: TestUser;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const workers: ServiceProcess[] = [];
const held: ServerResponse[] = [];
let onRequest: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
  held.push(res);
};

async function spawnWorker(): Promise<ServiceProcess> {
  const worker = await spawnServiceProcess('worker', t.databaseUrl);
  workers.push(worker);
  return worker;
}

/** The spawned worker process executing `uid` now (from `circuit_runs.worker`, host:pid). */
async function workerRunning(uid: string): Promise<ServiceProcess> {
  const run = await CircuitRun.findByPk(uid, { attributes: ['worker'] });
  const pid = Number(run?.worker?.split(':').at(-1));
  const worker = workers.find((w) => w.proc.pid === pid);
  if (!worker) throw new Error(`run ${uid} is held by ${run?.worker}, not by a spawned worker`);
  return worker;
}

const alive = () => workers.filter((w) => w.proc.exitCode === null && w.proc.signalCode === null);

beforeAll(async () => {
  t = await startTestApp({ runWorker: false });
  owner = await makeUser({ credits: 10_000 });
  target = await startHttpTarget((req, res) => onRequest(req, res));
  await Promise.all([spawnWorker(), spawnWorker()]);
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await target.close();
  await t.close();
});

test('a poison run that kills every worker executing it runs 3 times in all, then ends EXCEPTION WorkerLost; ordinary runs keep completing on 2 workers', async () => {
  const poison = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'crash', kind: 'http', method: 'GET', url: `${target.url}/poison` }],
  });
  const plain = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'ok', kind: 'http', method: 'GET', url: `${target.url}/ok` }],
  });
  let poisonUid = '';
  const respawns: Promise<ServiceProcess>[] = [];
  onRequest = (req, res) => {
    if (req.url !== '/poison')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    // The run's execution kills the process executing it (as an uncatchable V8 abort would); a supervisor starts another.
    void workerRunning(poisonUid).then(async (worker) => {
      await worker.kill('SIGKILL');
      res.destroy();
      respawns.push(spawnWorker());
    });
  };
  const { body } = await submitRun(t, owner.token, poison.adaptorUid, { input: {} });
  poisonUid = body.payload.uid;
  const ordinary: string[] = [];
  const submitter = (async () => {
    while (ordinary.length < 12) {
      ordinary.push((await submitRun(t, owner.token, plain.adaptorUid, { input: {} })).body.payload.uid);
      await sleep(500);
    }
  })();

  const run = await waitForRun(t, poisonUid, owner.token, 180_000);
  expect(run).toMatchObject({
    state: 'EXCEPTION',
    error: { code: 'WorkerLost', message: expect.stringContaining('3 times') },
  });
  expect(target.requests.filter((r) => r.url === '/poison')).toHaveLength(3);
  expect((await CircuitRun.findByPk(poisonUid))!.attempt).toBe(4);
  expect(
    (await CreditLedger.findAll({ where: { run_uid: poisonUid } })).map((r) => Math.abs(Number(r.amount))),
  ).toEqual([1]);

  await submitter;
  await Promise.all(respawns);
  const finished = await Promise.all(ordinary.map((uid) => waitForRun(t, uid, owner.token, 60_000)));
  expect(finished.map((r) => r.state)).toEqual(ordinary.map(() => 'COMPLETED'));
  expect(alive().length).toBeGreaterThanOrEqual(2);
});

test('a worker that is alive but stops heartbeating (frozen with SIGSTOP past the lock lifetime) keeps its run: executed once, attempt 1', async () => {
  const hold = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'slow', kind: 'http', method: 'GET', url: `${target.url}/frozen` }],
  });
  const frozen: ServerResponse[] = [];
  onRequest = (req, res) => {
    if (req.url === '/frozen') frozen.push(res);
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  };
  const { body } = await submitRun(t, owner.token, hold.adaptorUid, { input: {} });
  await until('the call to be held', () => frozen.length === 1);
  const worker = await workerRunning(body.payload.uid);
  worker.proc.kill('SIGSTOP');
  await sleep(8_000); // 4 lock lifetimes: other workers get the job and find the run held by a live worker
  worker.proc.kill('SIGCONT');
  frozen[0].writeHead(200, { 'content-type': 'application/json' }).end('{"thawed":true}');
  const run = await waitForRun(t, body.payload.uid, owner.token, 30_000);
  expect(run.state).toBe('COMPLETED');
  expect(run.result_blob.output).toEqual({ thawed: true });
  expect(frozen).toHaveLength(1);
  expect((await CircuitRun.findByPk(body.payload.uid))!.attempt).toBe(1);
});

test('a RUNNING run in another worker process is canceled from this API process, its request aborted', async () => {
  const hold = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'slow', kind: 'http', method: 'GET', url: `${target.url}/cancel-me` }],
  });
  const waiting: ServerResponse[] = [];
  onRequest = (req, res) => {
    if (req.url === '/cancel-me') waiting.push(res);
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  };
  const { body } = await submitRun(t, owner.token, hold.adaptorUid, { input: {} });
  await until('the call to be held', () => waiting.length === 1);
  await workerRunning(body.payload.uid); // executing in a spawned worker, not here
  const res = await t.rest('POST', `/circuit-runs/${body.payload.uid}/cancel`, { token: owner.token });
  expect(res.body.payload).toMatchObject({ state: 'EXCEPTION', error: { code: 'Canceled' } });
  await until('the call to be aborted', () => waiting[0].destroyed || waiting[0].req.destroyed, 5_000);
  expect(
    (await CreditLedger.findAll({ where: { run_uid: body.payload.uid } })).map((r) => Math.abs(Number(r.amount))),
  ).toEqual([1]);
});

test('a deadline holds when the worker running the run is SIGKILLed: another worker ends it EXCEPTION DeadlineExceeded', async () => {
  const hold = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'slow', kind: 'http', method: 'GET', url: `${target.url}/never` }],
  });
  const never: ServerResponse[] = [];
  onRequest = (req, res) => {
    if (req.url === '/never') never.push(res);
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  };
  const { body } = await submitRun(t, owner.token, hold.adaptorUid, { input: {}, deadline_s: 3 });
  await until('the call to be held', () => never.length === 1);
  await (await workerRunning(body.payload.uid)).kill('SIGKILL');
  expect(alive().length).toBeGreaterThanOrEqual(1);
  const run = await waitForRun(t, body.payload.uid, owner.token, 60_000);
  expect(run).toMatchObject({ state: 'EXCEPTION', error: { code: 'DeadlineExceeded' } });
  expect(Date.parse(run.ended_at) - Date.parse(run.created_at)).toBeGreaterThanOrEqual(2_900);
});

test('canceling a RUNNING run whose worker was SIGKILLed ends it EXCEPTION Canceled without executing it again', async () => {
  const hold = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'slow', kind: 'http', method: 'GET', url: `${target.url}/orphan` }],
  });
  const orphan: ServerResponse[] = [];
  onRequest = (req, res) => {
    if (req.url === '/orphan') orphan.push(res);
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  };
  const { body } = await submitRun(t, owner.token, hold.adaptorUid, { input: {} });
  await until('the call to be held', () => orphan.length === 1);
  const { worker_backend_pid: presencePid } = (await CircuitRun.findByPk(body.payload.uid, {
    attributes: ['worker_backend_pid'],
  }))!;
  await (await workerRunning(body.payload.uid)).kill('SIGKILL');
  // The cancel tells a dead worker by its presence backend being gone. The earlier tests left this the
  // only worker, so nothing else can end the run: wait until PostgreSQL has noticed the death (under
  // load that took longer than the cancel request, and the run stayed RUNNING).
  await until(
    "PostgreSQL to notice the worker's death",
    async () =>
      (
        await t.app.services.sequelize.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1`, {
          bind: [presencePid],
          type: QueryTypes.SELECT,
        })
      ).length === 0,
  );
  const res = await t.rest('POST', `/circuit-runs/${body.payload.uid}/cancel`, { token: owner.token });
  const run =
    res.body.payload.state === 'EXCEPTION'
      ? res.body.payload
      : await waitForRun(t, body.payload.uid, owner.token, 20_000);
  expect(run).toMatchObject({ state: 'EXCEPTION', error: { code: 'Canceled' } });
  await sleep(3_000);
  expect(target.requests.filter((r) => r.url === '/orphan')).toHaveLength(1);
});
