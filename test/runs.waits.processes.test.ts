import net from 'node:net';
import { createTestDatabase } from './support/database';
import { makeUser, type TestUser } from './support/factories';
import {
  makeRunnableCircuit,
  ServiceProcess,
  spawnServiceProcess,
  startHttpTarget,
  submitRun,
  waitForRun,
} from './support/run-factories';
import { restClient } from './support/http';
import { createSequelize } from '../src/db/sequelize';
import { initModels } from '../src/models';
import { CreditLedger } from '../src/models/CreditLedger';
import type { CircuitDefinition } from '../src/domain/definition';
import type { Sequelize } from 'sequelize';

/**
 * Waits across real processes: an API process (RUN_WORKER=false) and worker processes on one database,
 * stopped and started again while runs are parked (RUN_PARK_AFTER_S=0: a run whose steps in flight all
 * wait is a row at once, held by no process). A parked run is woken by a signal sent after both restarted,
 * a timer that came due while no worker ran fires once when workers come back, and an `http` step hands
 * its callback URL to a provider that answers later on it.
 */

jest.setTimeout(120_000);

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sequelize: Sequelize;
let owner: TestUser;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  sequelize = createSequelize(database.url, 4);
  initModels(sequelize);
  owner = await makeUser({ credits: 1000 });
});
afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill('SIGKILL')));
  await sequelize.close();
  await database.drop();
});

/** A TCP port free now, for an API process that must listen on the same address after a restart. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** An API process (no worker) on `port`. */
async function startApi(port: number): Promise<ServiceProcess> {
  const api = await spawnServiceProcess('api', database.url, { PORT: String(port) });
  processes.push(api);
  return api;
}

/** `count` worker processes that park a waiting run at once; their callback URLs name the API on `port`. */
async function startWorkers(port: number, count: number): Promise<ServiceProcess[]> {
  const workers = await Promise.all(
    Array.from({ length: count }, () =>
      spawnServiceProcess('worker', database.url, { RUN_PARK_AFTER_S: '0', PUBLIC_URL: `http://127.0.0.1:${port}` }),
    ),
  );
  processes.push(...workers);
  return workers;
}

/** The API on `port` and `count` workers, started together. */
async function startService(port: number, count: number) {
  const [api, workers] = await Promise.all([startApi(port), startWorkers(port, count)]);
  return { api, workers };
}

const client = (api: ServiceProcess) => ({ rest: restClient(`${api.url}/api/v1`) });

async function start(api: ServiceProcess, definition: CircuitDefinition): Promise<string> {
  const { adaptorUid } = await makeRunnableCircuit(owner, definition);
  const { status, body } = await submitRun(client(api) as never, owner.token, adaptorUid, { input: {} });
  expect(status).toBe(200);
  return body.payload.uid as string;
}

interface RunRow {
  state: string;
  parked_at: Date | null;
  wake_at: Date | null;
  heartbeat_at: Date | null;
  due: boolean | null;
}

async function row(uid: string): Promise<RunRow> {
  const [r] = await sequelize.query<RunRow>(
    `SELECT state, parked_at, wake_at, heartbeat_at, wake_at <= now() AS due FROM circuit_runs WHERE uid = $1`,
    { bind: [uid], type: 'SELECT' as never },
  );
  return r;
}

/** Polls the run's row until `ok` holds (or the timeout passes). */
async function until(uid: string, ok: (r: RunRow) => boolean, what: string, timeoutMs = 20_000): Promise<RunRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await row(uid);
    if (ok(r)) return r;
    if (Date.now() > deadline) throw new Error(`run ${uid} is not ${what}: ${JSON.stringify(r)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function stepEvents(uid: string): Promise<Array<{ step_id: string; status: string }>> {
  return sequelize.query<{ step_id: string; status: string }>(
    `SELECT data->>'step_id' AS step_id, data->>'status' AS status FROM circuit_run_events WHERE run_uid = $1 AND kind = 'step' ORDER BY seq`,
    { bind: [uid], type: 'SELECT' as never },
  );
}

const stopAll = (list: ServiceProcess[], signal: NodeJS.Signals) => Promise.all(list.map((p) => p.kill(signal)));

test('a run parked on a signal survives a restart of the API and of the worker, and completes on its callback URL afterwards', async () => {
  const port = await freePort();
  let { api, workers } = await startService(port, 1);
  const uid = await start(api, {
    query_schema: { type: 'object' },
    steps: [
      { id: 'before', kind: 'template', template: 'one' },
      { id: 'reply', kind: 'wait', for: 'signal' },
      { id: 'after', kind: 'transform', expression: '{"before": steps.before.output, "reply": steps.reply.output}' },
    ],
    output: 'steps.after.output',
  });
  const parked = await until(uid, (r) => r.parked_at !== null, 'parked');
  expect(parked).toMatchObject({ state: 'RUNNING', heartbeat_at: null, wake_at: expect.any(Date) });
  const { body } = await client(api).rest('GET', `/circuit-runs/${uid}`, { token: owner.token });
  const callbackUrl: string = body.payload.waiting_for[0].callback_url;
  expect(callbackUrl.startsWith(`${api.url}/api/v1/callbacks/`)).toBe(true);

  // Both processes stop (as a deploy stops them) and start again on the same database and address.
  await stopAll([api, ...workers], 'SIGTERM');
  expect(await row(uid)).toMatchObject({ state: 'RUNNING', parked_at: expect.any(Date) });
  ({ api, workers } = await startService(port, 1));

  // The URL handed out before the restart, no token.
  const res = await fetch(callbackUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ok: 1 }),
  });
  expect(res.status).toBe(202);
  const run = await waitForRun(client(api), uid, owner.token, 30_000);
  expect(run.state).toBe('COMPLETED');
  expect(run.result_blob.output).toEqual({ before: 'one', reply: { ok: 1 } });
  expect(await CreditLedger.count({ where: { run_uid: uid } })).toBe(1);
  await stopAll([api, ...workers], 'SIGTERM');
});

test('a timer that came due while every worker was down fires once when two workers come back', async () => {
  let hits = 0;
  const counter = await startHttpTarget((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ hit: hits }));
  });
  try {
    const port = await freePort();
    const { api, workers } = await startService(port, 2);
    const uid = await start(api, {
      query_schema: { type: 'object' },
      steps: [
        { id: 'prepare', kind: 'transform', expression: '{"n": 1}' },
        { id: 'nap', kind: 'wait', for: 'time', duration_s: 3 },
        // Reads the wait's output, so it runs after it (steps run as soon as the steps they read have finished).
        {
          id: 'call',
          kind: 'http',
          method: 'POST',
          url: `${counter.url}/hit`,
          body: { n: '{{steps.prepare.output.n}}', waited: '{{steps.nap.output.waited_s}}' },
        },
        {
          id: 'done',
          kind: 'transform',
          expression: '{"waited": steps.nap.output.waited_s, "hit": steps.call.output.hit}',
        },
      ],
      output: 'steps.done.output',
    });
    const parked = await until(uid, (r) => r.parked_at !== null, 'parked');
    expect(parked.wake_at).not.toBeNull();
    await stopAll(workers, 'SIGKILL');
    // Past the wake time with no worker: nothing wakes the run (the API process has no sweeper).
    const due = await until(uid, (r) => r.due === true, 'due', 10_000);
    expect(due.parked_at).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await row(uid)).toMatchObject({ state: 'RUNNING', parked_at: expect.any(Date) });
    expect(hits).toBe(0);

    const again = await startWorkers(port, 2);
    const run = await waitForRun(client(api), uid, owner.token, 30_000);
    expect(run.state).toBe('COMPLETED');
    expect(run.result_blob.output).toEqual({ waited: 3, hit: 1 });
    expect(hits).toBe(1);
    // The events of the attempt are flushed in batches: wait for the `done` step's.
    const deadline = Date.now() + 5_000;
    while (!(await stepEvents(uid)).some((e) => e.step_id === 'done' && e.status === 'completed')) {
      if (Date.now() > deadline)
        throw new Error(`no completed event of done: ${JSON.stringify(await stepEvents(uid))}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const events = await stepEvents(uid);
    expect(events.filter((e) => e.step_id === 'nap' && e.status === 'completed')).toHaveLength(1);
    expect(events.filter((e) => e.step_id === 'call' && e.status === 'completed')).toHaveLength(1);
    // (`prepare`, a transform, has no effect outside the run: the attempt that resumes computes it again.)
    expect(await CreditLedger.count({ where: { run_uid: uid } })).toBe(1);
    await stopAll([api, ...again], 'SIGTERM');
  } finally {
    await counter.close();
  }
});

test('an http step hands its callback URL to a provider that answers 202, then POSTs the result to it', async () => {
  const sent: unknown[] = [];
  const provider = await startHttpTarget((req, res) => {
    res.writeHead(202, { 'content-type': 'application/json' }).end('{"queued":true}');
    const last = provider.requests.at(-1)!;
    const { callback } = JSON.parse(last.body) as { callback: string };
    setTimeout(() => {
      void fetch(callback, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ video: 'ready', id: 7 }),
      }).then((answer) => sent.push(answer.status));
    }, 300);
  });
  try {
    const { api, workers } = await startService(await freePort(), 1);
    const uid = await start(api, {
      query_schema: { type: 'object' },
      steps: [
        {
          id: 'order',
          kind: 'http',
          method: 'POST',
          url: `${provider.url}/render`,
          body: { callback: '{{waits.done.callback_url}}' },
        },
        { id: 'done', kind: 'wait', for: 'signal' },
      ],
      output: 'steps.done.output',
    });
    const run = await waitForRun(client(api), uid, owner.token, 30_000);
    expect(run.state).toBe('COMPLETED');
    expect(run.result_blob.output).toEqual({ video: 'ready', id: 7 });
    expect(sent).toEqual([202]);
    expect(provider.requests).toHaveLength(1);
    expect(JSON.parse(provider.requests[0].body).callback).toMatch(
      new RegExp(`^${api.url}/api/v1/callbacks/${uid}/done/`),
    );
    const [step] = await sequelize.query<{ status: string; data: unknown }>(
      `SELECT status, decision->'data' AS data FROM circuit_run_steps WHERE run_uid = $1 AND path = 'done'`,
      { bind: [uid], type: 'SELECT' as never },
    );
    expect(step).toEqual({ status: 'signaled', data: { video: 'ready', id: 7 } });
    // steps.<id>.output of each step as the API shows them (the run compared with itself).
    const compared = await client(api).rest('GET', `/circuit-runs/${uid}/compare/${uid}`, { token: owner.token });
    expect(compared.body.payload.steps.done.a).toEqual({ video: 'ready', id: 7 });
    expect(compared.body.payload.steps.order.a).toEqual({ queued: true });
    await stopAll([api, ...workers], 'SIGTERM');
  } finally {
    await provider.close();
  }
});
