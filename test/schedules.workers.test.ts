import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeCircuit, makeUser, TestUser } from './support/factories';
import { ServiceProcess, spawnServiceProcess } from './support/run-factories';

jest.setTimeout(120_000);

let t: TestApp;
let owner: TestUser;
let workers: ServiceProcess[] = [];

/**
 * Three schedules on the same 10 s cron, each on a circuit of its own, fire side by side in the worker
 * processes: `ticking` fires throughout (and is the clock of the others' negative checks), `paused` is
 * paused and resumed, `deleted` is deleted. Real time is the point here: the cron instants are
 * Agenda's, in processes of their own.
 */
interface Subject {
  circuitUid: string;
  scheduleUid: string;
}
const subjects = {} as Record<'ticking' | 'paused' | 'deleted', Subject>;

beforeAll(async () => {
  // This process only serves the API; schedules fire in two spawned worker processes.
  t = await startTestApp({ runWorker: false });
  owner = await makeUser({ credits: 1000 });
  for (const name of ['ticking', 'paused', 'deleted'] as const)
    subjects[name] = {
      circuitUid: (await makeCircuit(owner, {}, HELLO_DEFINITION)).circuit.uid,
      scheduleUid: '',
    };
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

/** A schedule's runs and the scheduled instants they stand for (one idempotency key per fired instant). */
async function fires(subject: Subject): Promise<{ runs: number; instants: string[] }> {
  const [runs] = (await t.app.services.sequelize.query(
    `SELECT count(*) AS n FROM circuit_runs WHERE circuit_uid = $1`,
    { bind: [subject.circuitUid] },
  )) as [{ n: string }[], unknown];
  const [keys] = (await t.app.services.sequelize.query(
    `SELECT k.key FROM idempotency_keys k JOIN circuit_runs r ON r.uid = k.run_uid WHERE r.circuit_uid = $1 ORDER BY k.key`,
    { bind: [subject.circuitUid] },
  )) as [{ key: string }[], unknown];
  return { runs: Number(runs[0].n), instants: keys.map((k) => k.key.split('@')[1]) };
}

async function untilFires(subject: Subject, atLeast: number, timeoutMs = 45_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = await fires(subject);
    if (now.runs >= atLeast) return now;
    if (Date.now() > deadline) throw new Error(`only ${now.runs} fires of ${atLeast} after ${timeoutMs} ms`);
    await sleep(200);
  }
}

/**
 * The first instant after `since` at which `ticking` fired, once every fire due by then is over: no
 * `fireSchedule` job is still due at it or running. A job of a schedule that should not fire, had it
 * been left, would have been due at that instant too and its run would be there.
 */
async function firstInstantDoneAfter(since: number): Promise<number> {
  const deadline = Date.now() + 45_000;
  for (;;) {
    const instant = (await fires(subjects.ticking)).instants.map((i) => new Date(i).getTime()).find((i) => i > since);
    if (instant !== undefined) {
      const [[{ n }]] = (await t.app.services.sequelize.query(
        `SELECT count(*) AS n FROM agenda_jobs WHERE name = 'fireSchedule' AND (locked_at IS NOT NULL OR next_run_at <= $1)`,
        { bind: [new Date(instant)] },
      )) as [{ n: string }[], unknown];
      if (Number(n) === 0) return instant;
    }
    if (Date.now() > deadline) throw new Error(`no instant after ${since} fired and done in 45 s`);
    await sleep(200);
  }
}

function expectOneRunPerInstant(state: { runs: number; instants: string[] }) {
  expect(state.instants).toHaveLength(state.runs);
  expect(new Set(state.instants).size).toBe(state.runs);
  for (const instant of state.instants) expect(new Date(instant).getUTCSeconds() % 10).toBe(0);
}

test('with two worker processes a 6-field cron makes exactly one run per scheduled instant', async () => {
  for (const subject of Object.values(subjects)) {
    const created = await t.rest('POST', `/circuits/${subject.circuitUid}/schedules`, {
      token: owner.token,
      body: { cron: '*/10 * * * * *', input: { name: 'Tick' } },
    });
    expect(created.status).toBe(200);
    subject.scheduleUid = created.body.payload.uid;
  }
  await untilFires(subjects.ticking, 2);
  // Every schedule's instants, fired side by side by both workers: one run each.
  for (const subject of Object.values(subjects)) expectOneRunPerInstant(await fires(subject));
  const state = await fires(subjects.ticking);
  // Consecutive instants, 10 s apart.
  const times = state.instants.map((i) => new Date(i).getTime());
  for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBe(10_000);
});

test('a paused schedule and a deleted one do not fire while another on the same cron does', async () => {
  const { paused, deleted } = subjects;
  const pause = await t.rest('PUT', `/schedules/${paused.scheduleUid}`, {
    token: owner.token,
    body: { is_paused: true },
  });
  expect(pause.body.payload.is_paused).toBe(true);
  expect((await t.rest('DELETE', `/schedules/${deleted.scheduleUid}`, { token: owner.token })).status).toBe(200);
  // A fire already under way stands for an instant up to `since`; the next instant, fired and done, makes the
  // check final.
  const since = Date.now();
  await firstInstantDoneAfter(since);
  for (const subject of [paused, deleted]) {
    const state = await fires(subject);
    expect(state.instants.filter((i) => new Date(i).getTime() > since)).toEqual([]);
    expectOneRunPerInstant(state);
  }
  const [jobs] = (await t.app.services.sequelize.query(
    `SELECT count(*) AS n FROM agenda_jobs WHERE name = 'fireSchedule' AND data->>'scheduleUid' = $1`,
    { bind: [deleted.scheduleUid] },
  )) as [{ n: string }[], unknown];
  expect(Number(jobs[0].n)).toBe(0);
});

test('a resumed schedule fires again', async () => {
  const before = await fires(subjects.paused);
  await t.rest('PUT', `/schedules/${subjects.paused.scheduleUid}`, { token: owner.token, body: { is_paused: false } });
  expectOneRunPerInstant(await untilFires(subjects.paused, before.runs + 1, 20_000));
});

test('a restart of every worker process loses no schedule', async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  const live = [subjects.ticking, subjects.paused];
  const before = await Promise.all(live.map(fires));
  workers = await Promise.all([
    spawnServiceProcess('worker', t.databaseUrl),
    spawnServiceProcess('worker', t.databaseUrl),
  ]);
  // Each live schedule fires again from the new workers, once per instant.
  const after = await Promise.all(live.map((subject, i) => untilFires(subject, before[i].runs + 1)));
  after.forEach(expectOneRunPerInstant);
});
