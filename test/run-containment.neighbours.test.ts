import type { ServerResponse } from 'node:http';
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
import { until } from './support/wait';
import { CircuitRun } from '../src/models/CircuitRun';

jest.setTimeout(240_000);

/**
 * A run that shared a worker with a poison run each time the poison killed it: real worker processes
 * (dist/src/worker.js, JOB_LOCK_LIFETIME_MS=2000), one alive at a time until both runs reach their last attempt.
 */
let t: TestApp;
let owner: TestUser;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const workers: ServiceProcess[] = [];

async function spawnWorker(): Promise<ServiceProcess> {
  const worker = await spawnServiceProcess('worker', t.databaseUrl);
  workers.push(worker);
  return worker;
}

beforeAll(async () => {
  t = await startTestApp({ runWorker: false });
  owner = await makeUser({ credits: 10_000 });
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await target?.close();
  await t.close();
});

test('a run beside a poison run in both workers the poison killed gets its last attempt apart from the poison and completes; the poison ends WorkerLost after 3 executions', async () => {
  let poisonUid = '';
  let released = false;
  const holds: ServerResponse[] = [];
  let poisonCalls = 0;
  let spawnedForLastAttempts = false;
  const spawning: Promise<ServiceProcess>[] = [];
  target = await startHttpTarget((req, res) => {
    if (req.url === '/neighbour') {
      if (released) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      holds.push(res);
      // The neighbour's third execution began: its last attempt. A second worker is there for the poison's.
      if (holds.length === 3 && !spawnedForLastAttempts) {
        spawnedForLastAttempts = true;
        spawning.push(spawnWorker());
      }
      return;
    }
    const call = ++poisonCalls;
    void (async () => {
      // The first two executions kill their worker only once the neighbour is executing in it as well
      // (one worker is alive then): it is lost with the poison both times.
      if (call <= 2) await until('the neighbour to be held', () => holds.length >= call, 30_000);
      const run = await CircuitRun.findByPk(poisonUid, { attributes: ['worker'] });
      const pid = Number(run?.worker?.split(':').at(-1));
      const worker = workers.find((w) => w.proc.pid === pid);
      await worker?.kill('SIGKILL');
      res.destroy();
      spawning.push(spawnWorker());
    })();
  });
  const poison = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'crash', kind: 'http', method: 'GET', url: `${target.url}/poison` }],
  });
  const neighbour = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'wait', kind: 'http', method: 'GET', url: `${target.url}/neighbour` }],
  });
  await spawnWorker();

  const neighbourUid = (await submitRun(t, owner.token, neighbour.adaptorUid, { input: {} })).body.payload.uid;
  await until('the neighbour to be held', () => holds.length === 1);
  poisonUid = (await submitRun(t, owner.token, poison.adaptorUid, { input: {} })).body.payload.uid;

  const lost = await waitForRun(t, poisonUid, owner.token, 180_000);
  expect(lost).toMatchObject({
    state: 'EXCEPTION',
    error: { code: 'WorkerLost', message: expect.stringContaining('3 times') },
  });
  expect(poisonCalls).toBe(3);

  released = true;
  for (const res of holds.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  const survived = await waitForRun(t, neighbourUid, owner.token, 60_000);
  expect(survived.state).toBe('COMPLETED');
  // Executed three times: lost twice beside the poison, then its last attempt apart from it.
  expect((await CircuitRun.findByPk(neighbourUid))!.attempt).toBe(3);
  expect(target.requests.filter((r) => r.url === '/neighbour')).toHaveLength(3);
  await Promise.all(spawning);
});
