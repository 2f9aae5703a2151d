import type { ServerResponse } from 'node:http';
import { User } from '../src/models';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeUser, TestUser } from './support/factories';
import {
  makeRunnableCircuit,
  ServiceProcess,
  spawnServiceProcess,
  startHttpTarget,
  submitRun,
  waitForRun,
} from './support/run-factories';

/**
 * Run metrics when runs are executed by a separate worker process (`npm run worker`):
 * the API that serves /metrics (a spawned `npm start` without a worker) executes nothing, and still
 * reports every run, step, charge and webhook attempt of the worker process, and the runs it holds.
 */
jest.setTimeout(120_000);

let t: TestApp;
let owner: TestUser;
let api: ServiceProcess | undefined;
let worker: ServiceProcess | undefined;
let receiver: Awaited<ReturnType<typeof startHttpTarget>>;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const held: ServerResponse[] = [];

beforeAll(async () => {
  t = await startTestApp({ runWorker: false });
  owner = await makeUser({ credits: 100 });
  receiver = await startHttpTarget((req, res) => {
    res
      .writeHead(req.url === '/flaky' && receiver.requests.filter((r) => r.url === '/flaky').length === 1 ? 500 : 200)
      .end();
  });
  target = await startHttpTarget((_req, res) => {
    held.push(res);
  });
  [api, worker] = await Promise.all([
    spawnServiceProcess('api', t.databaseUrl, { RUN_WORKER: 'false' }),
    spawnServiceProcess('worker', t.databaseUrl, { WEBHOOK_RETRY_BASE_MS: '100' }),
  ]);
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await worker?.kill();
  await api?.kill();
  await Promise.all([receiver?.close(), target?.close()]);
  await t?.close();
});

async function scrape(): Promise<string> {
  const res = await fetch(`${api!.url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** A sample's value (0 when absent): `name{labels} value`. */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line ? Number(line.split(' ').pop()) : 0;
}

async function scrapeUntil(check: (text: string) => boolean, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await scrape();
    if (check(text)) return text;
    if (Date.now() > deadline)
      throw new Error(
        `metrics never matched:\n${text
          .split('\n')
          .filter((l) => l.startsWith('circuit_'))
          .join('\n')}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test("a worker process's runs, steps, charges and webhook attempts show on the API's /metrics", async () => {
  const before = await scrape();
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const failing = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'check', kind: 'transform', expression: '$error("no")' }],
  });

  const balanceBefore = Number((await User.findByPk(owner.user.uid))!.credits);
  const submitted = await Promise.all([
    submitRun(t, owner.token, hello.adaptorUid, { input: { name: 'Ada' }, webhook: `${receiver.url}/ok` }),
    submitRun(t, owner.token, hello.adaptorUid, {
      input: { name: 'Bob' },
      webhook: `${receiver.url}/flaky`,
      webhook_events_filter: ['completed'],
    }),
    submitRun(t, owner.token, failing.adaptorUid, { input: {} }),
  ]);
  const runs = await Promise.all(submitted.map((res) => waitForRun(t, res.body.payload.uid, owner.token, 30_000)));
  expect(runs.map((r) => r.state)).toEqual(['COMPLETED', 'COMPLETED', 'EXCEPTION']);
  const charged = balanceBefore - Number((await User.findByPk(owner.user.uid))!.credits);
  expect(charged).toBeGreaterThanOrEqual(3);

  const moved =
    (name: string, labels = '') =>
    (text: string) =>
      sample(text, name, labels) - sample(before, name, labels);
  const after = await scrapeUntil(
    (text) =>
      moved('circuit_runs_total', 'state="COMPLETED"')(text) === 2 &&
      moved('circuit_runs_total', 'state="EXCEPTION"')(text) === 1 &&
      moved('circuit_webhook_deliveries_total', 'outcome="retry"')(text) >= 1 &&
      moved('circuit_webhook_deliveries_total', 'outcome="delivered"')(text) >= 2,
  );
  expect(moved('circuit_run_duration_seconds_count')(after)).toBe(3);
  expect(moved('circuit_run_duration_seconds_bucket', 'le="+Inf"')(after)).toBe(3);
  expect(moved('circuit_run_duration_seconds_sum')(after)).toBeGreaterThan(0);
  expect(moved('circuit_step_duration_seconds_count', 'kind="template"')(after)).toBe(2);
  expect(moved('circuit_step_duration_seconds_count', 'kind="transform"')(after)).toBe(3);
  expect(moved('circuit_credits_charged_total')(after)).toBe(charged);
  // The API process ran none of it: its worker is off, and its log never says a run ended.
  expect(api!.output.some((line) => line.includes('"run ended"'))).toBe(false);
  expect(worker!.output.some((line) => line.includes('"run ended"'))).toBe(true);
});

test("runs held by the worker process are the API's circuit_runs_in_flight, until they end", async () => {
  const hold = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'wait', kind: 'http', method: 'GET', url: target.url }],
  });
  const submitted = await Promise.all([1, 2].map(() => submitRun(t, owner.token, hold.adaptorUid, { input: {} })));
  expect(submitted.map((res) => res.status)).toEqual([200, 200]);
  await scrapeUntil((text) => sample(text, 'circuit_runs_in_flight') === 2);

  const deadline = Date.now() + 15_000;
  while (held.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(held).toHaveLength(2);
  for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"done":true}');
  const runs = await Promise.all(submitted.map((res) => waitForRun(t, res.body.payload.uid, owner.token, 30_000)));
  expect(runs.map((r) => r.state)).toEqual(['COMPLETED', 'COMPLETED']);
  const after = await scrapeUntil(
    (text) =>
      sample(text, 'circuit_runs_in_flight') === 0 &&
      sample(text, 'circuit_step_duration_seconds_count', 'kind="http"') === 2,
  );
  expect(sample(after, 'circuit_step_duration_seconds_bucket', 'le="+Inf",kind="http"')).toBe(2);
});
