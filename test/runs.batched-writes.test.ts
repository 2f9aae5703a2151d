import { startTestApp, TestApp } from './support/app';
import { makeUser, HELLO_DEFINITION } from './support/factories';
import { makeRunnableCircuit, submitRun } from './support/run-factories';
import { claimRun } from '../src/runs/transitions';
import { endRun } from '../src/runs/execute';
import { runDeps } from './support/run-deps';
import { User } from '../src/models';
import { sequelizeConnections, type PgConnection } from '../src/library-patches';
import { CircuitRun } from '../src/models/CircuitRun';

jest.setTimeout(60_000);

/**
 * A worker's writes for runs arriving together: claims made while another is being written go
 * together in one statement (src/db/statement-batcher.ts). That may not change what a write decides:
 * each run is claimed once, a run asked for twice (delivered twice) is given to one asker, a run that
 * is not claimable in a batch gets null while the others are claimed, and runs ending at once are
 * each charged exactly once.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ runWorker: false });
});
afterAll(async () => {
  await t.close();
});

async function provisionedRuns(count: number, owner?: Awaited<ReturnType<typeof makeUser>>): Promise<string[]> {
  owner ??= await makeUser({ credits: 100 });
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const uids: string[] = [];
  for (let i = 0; i < count; i++)
    uids.push((await submitRun(t, owner.token, adaptorUid, { input: { name: `n${i}` } })).body.payload.uid as string);
  return uids;
}

/** Counts the claim statements sent to PostgreSQL while `work` runs. */
async function countingClaimStatements<T>(work: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const manager = sequelizeConnections(t.app.services.sequelize);
  const getConnection = manager.getConnection.bind(manager);
  let statements = 0;
  const counted = new WeakSet<PgConnection>();
  manager.getConnection = async (options: object) => {
    const connection = await getConnection(options);
    if (!counted.has(connection)) {
      counted.add(connection);
      const query = connection.query.bind(connection) as (...args: unknown[]) => Promise<{ rows: unknown[] }>;
      connection.query = ((...args: unknown[]) => {
        const text = (args[0] as { text?: unknown } | undefined)?.text;
        if (typeof text === 'string' && /WITH claimed AS/.test(text)) statements += 1;
        return query(...args);
      }) as PgConnection['query'];
    }
    return connection;
  };
  try {
    return { result: await work(), statements };
  } finally {
    manager.getConnection = getConnection;
  }
}

test('twelve claims at once: each run is claimed once, a run asked for twice goes to one asker, and they share statements', async () => {
  const uids = await provisionedRuns(6);
  const deps = runDeps(t.app);
  const runEvents = deps.bus;
  const asked = [...uids, ...uids];
  const { result: claims, statements } = await countingClaimStatements(() =>
    Promise.all(asked.map((uid) => claimRun(deps.runService.claims, uid, 60_000, runEvents.sqlChannel))),
  );
  const granted = claims.filter((c) => c !== null);
  expect(granted.map((c) => c!.uid).sort()).toEqual([...uids].sort());
  expect(granted.every((c) => c!.attempt === 1 && c!.definition !== null)).toBe(true);
  expect(statements).toBeLessThan(asked.length);
  const rows = await CircuitRun.findAll({ where: { uid: uids }, attributes: ['state', 'attempt'] });
  expect(rows.map((r) => [r.state, r.attempt])).toEqual(uids.map(() => ['RUNNING', 1]));
});

test('in one batch, a run that is not claimable (already ended) gets null and the others are claimed', async () => {
  const [ended, ...others] = await provisionedRuns(4);
  await CircuitRun.update({ state: 'EXCEPTION', ended_at: new Date() }, { where: { uid: ended }, hooks: false });
  const deps = runDeps(t.app);
  const runEvents = deps.bus;
  const claims = await Promise.all(
    [ended, ...others].map((uid) => claimRun(deps.runService.claims, uid, 60_000, runEvents.sqlChannel)),
  );
  expect(claims[0]).toBeNull();
  expect(claims.slice(1).map((c) => c?.uid)).toEqual(others);
});

test('thirty runs of one user ending at once are each charged exactly once, in turn: the ledger steps down one credit at a time', async () => {
  const owner = await makeUser({ credits: 100 });
  const uids = await provisionedRuns(30, owner);
  const { sequelize } = t.app.services;
  const deps = runDeps(t.app);
  const runEvents = deps.bus;
  await Promise.all(uids.map((uid) => claimRun(deps.runService.claims, uid, 60_000, runEvents.sqlChannel)));
  const ended = await Promise.all(
    uids.map((uid, i) =>
      endRun(deps, {
        uid,
        attempt: 1,
        state: 'COMPLETED',
        resultBlob: { output: `r${i}`, steps: {} },
        metrics: null,
        cost: 1,
      }),
    ),
  );
  expect(ended.every(Boolean)).toBe(true);
  // Ending again (a second delivery) changes nothing.
  expect(
    await endRun(deps, {
      uid: uids[0],
      attempt: 1,
      state: 'COMPLETED',
      resultBlob: { output: 'again', steps: {} },
      cost: 1,
    }),
  ).toBe(false);
  const user = await User.findByPk(owner.user.uid, { attributes: ['credits', 'credits_held'] });
  expect([Number(user!.credits), Number(user!.credits_held)]).toEqual([70, 0]);
  const [ledger] = await sequelize.query(
    `SELECT amount, balance_after FROM credit_ledger WHERE user_uid = $1 AND kind = 'run' ORDER BY seq`,
    { bind: [owner.user.uid] },
  );
  expect(ledger).toEqual(Array.from({ length: 30 }, (_, i) => ({ amount: '-1', balance_after: String(99 - i) })));
  const runs = await CircuitRun.findAll({ where: { uid: uids }, attributes: ['uid', 'state', 'credits_cost'] });
  expect(runs.every((r) => r.state === 'COMPLETED' && Number(r.credits_cost) === 1)).toBe(true);
});
