import type { ServerResponse } from 'node:http';
import { createTestDatabase } from './support/database';
import { makeUser } from './support/factories';
import {
  makeRunnableCircuit,
  readSse,
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
import type { Sequelize } from 'sequelize';

jest.setTimeout(150_000);

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sequelize: Sequelize;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const held: ServerResponse[] = [];
const processes: ServiceProcess[] = [];
let api1: ReturnType<typeof restClient>;
let api2: ServiceProcess;

beforeAll(async () => {
  database = await createTestDatabase();
  sequelize = createSequelize(database.url, 4);
  initModels(sequelize);
  target = await startHttpTarget((req, res) => {
    if (req.url?.startsWith('/hold')) held.push(res);
    else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url }));
  });
  // Two API processes that only enqueue, and two workers, on one database.
  const started = await Promise.all([
    spawnServiceProcess('api', database.url),
    spawnServiceProcess('api', database.url),
    spawnServiceProcess('worker', database.url),
    spawnServiceProcess('worker', database.url),
  ]);
  processes.push(...started);
  api1 = restClient(`${started[0].url}/api/v1`);
  api2 = started[1];
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await Promise.all(processes.map((p) => p.kill('SIGTERM')));
  await target.close();
  await sequelize.close();
  await database.drop();
});

test('a run submitted to API 1 executes exactly once on one of two workers and its events reach an SSE subscriber on API 2', async () => {
  const owner = await makeUser({ credits: 1000 });
  const { adaptorUid } = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object', properties: { n: { type: 'integer' } } },
    steps: [
      {
        id: 'call',
        kind: 'http',
        method: 'GET',
        url: `${target.url}/{{#if input.hold}}hold{{else}}run{{/if}}/{{input.n}}`,
      },
    ],
  });
  const t1 = { rest: api1 };

  const { body } = await submitRun(t1 as never, owner.token, adaptorUid, { input: { n: 0, hold: true } });
  const uid = body.payload.uid;
  const deadline = Date.now() + 15_000;
  while (held.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(held.length).toBe(1);
  let opened!: () => void;
  const open = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const stream = readSse(`${api2.url}/api/v1/circuit-runs/${uid}/events`, { token: owner.token, onOpen: opened });
  await open;
  held[0].writeHead(200, { 'content-type': 'application/json' }).end('{"held":false}');
  const { events } = await stream;
  expect(events.map((e) => JSON.parse(e.data!).state)).toEqual(['RUNNING', 'COMPLETED']);
  expect(Number(events[0].id)).toBe(2);
  expect(JSON.parse(events[1].data!).result_blob.output).toEqual({ held: false });

  // Many runs through API 1: each executes exactly once across the two workers.
  const submitted = await Promise.all(
    Array.from({ length: 40 }, (_, i) => submitRun(t1 as never, owner.token, adaptorUid, { input: { n: i + 1 } })),
  );
  const uids = submitted.map((r) => r.body.payload.uid);
  const runs = await Promise.all(uids.map((u) => waitForRun(t1 as never, u, owner.token, 30_000)));
  expect(runs.every((r) => r.state === 'COMPLETED')).toBe(true);
  const calls = target.requests
    .filter((r) => r.url.startsWith('/run/'))
    .map((r) => r.url)
    .sort();
  expect(calls).toEqual(Array.from({ length: 40 }, (_, i) => `/run/${i + 1}`).sort());
  expect(await CreditLedger.count({ where: { run_uid: [uid, ...uids] } })).toBe(41);
});
