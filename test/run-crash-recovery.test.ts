import type { ServerResponse } from 'node:http';
import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import {
  makeRunnableCircuit,
  ServiceProcess,
  spawnServiceProcess,
  startHttpTarget,
  submitRun,
  waitForRun,
} from './support/run-factories';
import { CircuitRun } from '../src/models/CircuitRun';
import { CreditLedger } from '../src/models/CreditLedger';
import { User } from '../src/models';

jest.setTimeout(60_000);

let t: TestApp;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const held: ServerResponse[] = [];
let holdRequests = true;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  // This process only enqueues; the runs execute in spawned worker processes.
  t = await startTestApp({ runWorker: false });
  target = await startHttpTarget((_req, res) => {
    if (holdRequests) held.push(res);
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"slow":"done"}');
  });
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await Promise.all(processes.map((p) => p.kill('SIGKILL')));
  await target.close();
  await t.close();
});

test('a run whose worker is SIGKILLed mid-run is taken over by another worker, ends terminal and is charged exactly once', async () => {
  const owner = await makeUser({ credits: 10 });
  const { adaptorUid } = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'slow', kind: 'http', method: 'GET', url: `${target.url}/slow` }],
  });
  const first = await spawnServiceProcess('worker', t.databaseUrl);
  processes.push(first);

  const { body } = await submitRun(t, owner.token, adaptorUid, { input: {} });
  const uid = body.payload.uid;
  const deadline = Date.now() + 15_000;
  while (held.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(held.length).toBe(1); // the first worker is inside the slow step
  expect((await CircuitRun.findByPk(uid))!.state).toBe('RUNNING');

  await first.kill('SIGKILL');
  holdRequests = false;
  const second = await spawnServiceProcess('worker', t.databaseUrl);
  processes.push(second);

  const run = await waitForRun(t, uid, owner.token, 30_000);
  expect(run.state).toBe('COMPLETED');
  expect(run.result_blob.output).toEqual({ slow: 'done' });
  const stored = await CircuitRun.findByPk(uid);
  expect(stored!.attempt).toBe(2);
  const charges = await CreditLedger.findAll({ where: { run_uid: uid } });
  expect(charges).toHaveLength(1);
  expect(Number(charges[0].amount)).toBe(-1);
  expect((await User.findByPk(owner.user.uid))!.creditBalance).toBe(9);
  // The job leaves the queue once the handler returns (a moment after the run ends).
  const jobsOf = async () => {
    const [{ n }] = await t.app.services.sequelize.query<{ n: string }>(
      `SELECT count(*) AS n FROM agenda_jobs WHERE data->>'runUid' = $1`,
      { bind: [uid], type: 'SELECT' as never },
    );
    return Number(n);
  };
  const jobDeadline = Date.now() + 10_000;
  while ((await jobsOf()) > 0 && Date.now() < jobDeadline) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await jobsOf()).toBe(0);
  await second.kill('SIGTERM');
  expect(await second.exited).toBe(0);
});
