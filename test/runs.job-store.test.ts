import { Client } from 'pg';
import { startTestApp, TestApp } from './support/app';
import { createTestDatabase } from './support/database';
import { makeUser, HELLO_DEFINITION } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget, submitRun, waitForRun } from './support/run-factories';

/**
 * A run's Agenda job is written once when queued, locked once when taken, and deleted once its run has
 * ended (src/queue/finished-jobs.ts: Agenda's own start and end saves are skipped, src/library-patches.ts):
 * nothing is left in the job store, also when the worker stops right after a run ends.
 */
jest.setTimeout(60_000);

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Client;
beforeAll(async () => {
  database = await createTestDatabase();
  sql = new Client({ connectionString: database.url });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await database.drop();
});
const jobsOf = async (uids: string[]) =>
  (
    await sql.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM agenda_jobs WHERE name = 'executeRun' AND data->>'runUid' = ANY($1)",
      [uids],
    )
  ).rows[0].n;

async function within(ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function runsOn(app: TestApp, count: number): Promise<string[]> {
  const owner = await makeUser();
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const uids = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const res = await submitRun(app, owner.token, hello.adaptorUid, { input: { name: `n${i}` } });
      expect(res.status).toBe(200);
      return res.body.payload.uid as string;
    }),
  );
  for (const uid of uids) expect((await waitForRun(app, uid, owner.token)).state).toBe('COMPLETED');
  return uids;
}

test('the jobs of ended runs leave the job store', async () => {
  const app = await startTestApp({}, { databaseUrl: database.url });
  try {
    const uids = await runsOn(app, 20);
    await within(2_000, async () => (await jobsOf(uids)) === 0);
  } finally {
    await app.close();
  }
});

test('runs that end just before their worker stops have their jobs deleted before it disconnects', async () => {
  const app = await startTestApp({}, { databaseUrl: database.url });
  const target = await startHoldingTarget();
  try {
    const owner = await makeUser();
    const hold = await makeRunnableCircuit(owner, target.holdDefinition());
    const uids = await Promise.all(
      Array.from(
        { length: 5 },
        async () => (await submitRun(app, owner.token, hold.adaptorUid, { input: {} })).body.payload.uid as string,
      ),
    );
    await target.untilHeld(5);
    // The runs end together and the worker stops the moment the last end is committed: their jobs'
    // deletion batch is still waiting when the job store is about to disconnect. (A stopping worker
    // gives back runs still executing at once; these have ended, so nothing is given back.)
    target.release();
    await within(
      30_000,
      async () =>
        (
          await sql.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM circuit_runs WHERE uid = ANY($1) AND state = 'COMPLETED'",
            [uids],
          )
        ).rows[0].n === 5,
    );
    await app.close();
    const { rows } = await sql.query<{ state: string }>('SELECT state FROM circuit_runs WHERE uid = ANY($1)', [uids]);
    expect(rows.map((r) => r.state)).toEqual(Array(5).fill('COMPLETED'));
    expect(await jobsOf(uids)).toBe(0);
  } finally {
    await target.close();
  }
});
