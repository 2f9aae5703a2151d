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

jest.setTimeout(90_000);

let t: TestApp;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const requests: Record<string, number> = {};
const held: ServerResponse[] = [];
let holdLast = true;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  // This process only enqueues; the runs execute in two spawned worker processes.
  t = await startTestApp({ runWorker: false });
  target = await startHttpTarget((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests[path] = (requests[path] ?? 0) + 1;
    if (path === '/last' && holdLast) {
      held.push(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path }));
  });
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await Promise.all(processes.map((p) => p.kill('SIGKILL')));
  await target.close();
  await t.close();
});

async function stepEvents(uid: string): Promise<Array<{ step_id: string; status: string }>> {
  return t.app.services.sequelize.query<{ step_id: string; status: string }>(
    `SELECT data->>'step_id' AS step_id, data->>'status' AS status FROM circuit_run_events WHERE run_uid = $1 AND kind = 'step' ORDER BY seq`,
    { bind: [uid], type: 'SELECT' as never },
  );
}

test('a worker SIGKILLed mid-run: another worker finishes the run, each finished step upstream saw exactly one request, charged once', async () => {
  const owner = await makeUser({ credits: 10 });
  // first → (embedded circuit with its own http step) → last: the first two finish before the worker dies.
  const inner = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'fetch', kind: 'http', method: 'GET', url: `${target.url}/inner` }],
  });
  const { adaptorUid } = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [
      { id: 'first', kind: 'http', method: 'GET', url: `${target.url}/first` },
      {
        id: 'embedded',
        kind: 'circuit',
        circuit_uid: inner.circuit.uid,
        input: { after: '{{steps.first.output.path}}' },
      },
      {
        id: 'last',
        kind: 'http',
        method: 'POST',
        url: `${target.url}/last`,
        body: { a: '{{steps.first.output.path}}', b: '{{steps.embedded.output.output.path}}' },
      },
      {
        id: 'shape',
        kind: 'transform',
        expression: '{"first": steps.first.output.path, "last": steps.last.output.path}',
      },
    ],
  });
  const workers = await Promise.all([
    spawnServiceProcess('worker', t.databaseUrl),
    spawnServiceProcess('worker', t.databaseUrl),
  ]);
  processes.push(...workers);

  const { body } = await submitRun(t, owner.token, adaptorUid, { input: {} });
  const uid = body.payload.uid as string;
  const deadline = Date.now() + 20_000;
  while (held.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(held.length).toBe(1); // a worker is inside `last`, with `first` and `embedded` finished
  // The killed attempt's step events are in the log (they are written in batches every 200 ms).
  while (
    !(await stepEvents(uid)).some((e) => e.step_id === 'last' && e.status === 'started') &&
    Date.now() < deadline
  ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const running = await CircuitRun.findByPk(uid);
  const holder = workers.find((w) => running!.worker?.endsWith(`:${w.proc.pid}`));
  expect(holder).toBeDefined();

  await holder!.kill('SIGKILL');
  holdLast = false;
  const run = await waitForRun(t, uid, owner.token, 60_000);
  expect(run.state).toBe('COMPLETED');
  expect(run.result_blob.output).toEqual({ first: '/first', last: '/last' });
  // Finished steps were not executed again: one request each; the step in flight was sent again.
  expect(requests['/first']).toBe(1);
  expect(requests['/inner']).toBe(1);
  expect(requests['/last']).toBe(2);
  const stored = await CircuitRun.findByPk(uid);
  expect(stored!.attempt).toBe(2);
  // One charge: the base credit plus the embedded run's.
  const charges = await CreditLedger.findAll({ where: { run_uid: uid } });
  expect(charges).toHaveLength(1);
  expect(Number(charges[0].amount)).toBe(-2);
  expect((await User.findByPk(owner.user.uid))!.creditBalance).toBe(8);
  // No second `started` event for a step an earlier attempt finished.
  const events = await stepEvents(uid);
  expect(events.filter((e) => e.step_id === 'first' && e.status === 'started')).toHaveLength(1);
  expect(events.filter((e) => e.step_id === 'embedded' && e.status === 'started')).toHaveLength(1);
});
