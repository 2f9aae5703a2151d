import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeCircuit, makeUser, TestUser } from './support/factories';
import { ServiceProcess, spawnServiceProcess } from './support/run-factories';

jest.setTimeout(120_000);

let t: TestApp;
let owner: TestUser;
let circuitUid: string;
let scheduleUid: string;
let workers: ServiceProcess[] = [];

beforeAll(async () => {
  // This process only serves the API; schedules fire in two spawned worker processes.
  t = await startTestApp({ runWorker: false });
  owner = await makeUser({ credits: 1000 });
  circuitUid = (await makeCircuit(owner, {}, HELLO_DEFINITION)).circuit.uid;
  workers = await Promise.all([
    spawnServiceProcess('worker', t.databaseUrl),
    spawnServiceProcess('worker', t.databaseUrl),
  ]);
}, 90_000);
afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await t.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The schedule's runs and the scheduled instants they stand for (one idempotency key per fired instant). */
async function fires(): Promise<{ runs: number; instants: string[] }> {
  const [runs] = (await t.app.services.sequelize.query(
    `SELECT count(*) AS n FROM circuit_runs WHERE circuit_uid = $1`,
    { bind: [circuitUid] },
  )) as [{ n: string }[], unknown];
  const [keys] = (await t.app.services.sequelize.query(
    `SELECT k.key FROM idempotency_keys k JOIN circuit_runs r ON r.uid = k.run_uid WHERE r.circuit_uid = $1 ORDER BY k.key`,
    { bind: [circuitUid] },
  )) as [{ key: string }[], unknown];
  return { runs: Number(runs[0].n), instants: keys.map((k) => k.key.split('@')[1]) };
}

async function untilFires(atLeast: number, timeoutMs = 45_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = await fires();
    if (now.runs >= atLeast) return now;
    if (Date.now() > deadline) throw new Error(`only ${now.runs} fires of ${atLeast} after ${timeoutMs} ms`);
    await sleep(200);
  }
}

function expectOneRunPerInstant(state: { runs: number; instants: string[] }) {
  expect(state.instants).toHaveLength(state.runs);
  expect(new Set(state.instants).size).toBe(state.runs);
  for (const instant of state.instants) expect(new Date(instant).getUTCSeconds() % 10).toBe(0);
}

test('with two worker processes a 6-field cron makes exactly one run per scheduled instant', async () => {
  const created = await t.rest('POST', `/circuits/${circuitUid}/schedules`, {
    token: owner.token,
    body: { cron: '*/10 * * * * *', input: { name: 'Tick' } },
  });
  expect(created.status).toBe(200);
  scheduleUid = created.body.payload.uid;
  const state = await untilFires(3);
  expectOneRunPerInstant(state);
  // Consecutive instants, 10 s apart.
  const times = state.instants.map((i) => new Date(i).getTime());
  for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBe(10_000);
});

test('a paused schedule does not fire; resumed, it fires again', async () => {
  const paused = await t.rest('PUT', `/schedules/${scheduleUid}`, { token: owner.token, body: { is_paused: true } });
  expect(paused.body.payload.is_paused).toBe(true);
  await sleep(1_000); // a fire already under way may still finish
  const before = await fires();
  await sleep(12_000);
  expect((await fires()).runs).toBe(before.runs);
  await t.rest('PUT', `/schedules/${scheduleUid}`, { token: owner.token, body: { is_paused: false } });
  expectOneRunPerInstant(await untilFires(before.runs + 1, 20_000));
});

test('a restart of every worker process loses no schedule', async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  const before = await fires();
  workers = await Promise.all([
    spawnServiceProcess('worker', t.databaseUrl),
    spawnServiceProcess('worker', t.databaseUrl),
  ]);
  expectOneRunPerInstant(await untilFires(before.runs + 2));
});

test('a deleted schedule never fires again', async () => {
  expect((await t.rest('DELETE', `/schedules/${scheduleUid}`, { token: owner.token })).status).toBe(200);
  await sleep(1_000);
  const before = await fires();
  await sleep(12_000);
  expect((await fires()).runs).toBe(before.runs);
  const [jobs] = (await t.app.services.sequelize.query(
    `SELECT count(*) AS n FROM agenda_jobs WHERE name = 'fireSchedule'`,
  )) as [{ n: string }[], unknown];
  expect(Number(jobs[0].n)).toBe(0);
});
