import { Client } from 'pg';
import type { Sequelize } from 'sequelize';
import { createSequelize } from '../src/db/sequelize';
import { pipelinedQuery } from '../src/db/pipelined';
import { preparedQuery } from '../src/db/prepared';
import { createTestDatabase } from './support/database';

/**
 * The pipelined connection (src/db/pipelined.ts) that runs' ends go through: statements sent together
 * are each answered on their own (an error fails only its own), each is its own transaction, a
 * dropped connection is replaced, and closing the Sequelize handle closes it.
 */
jest.setTimeout(30_000);

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sequelize: Sequelize;
let admin: Client;
beforeAll(async () => {
  database = await createTestDatabase();
  sequelize = createSequelize(database.url, 2);
  admin = new Client({ connectionString: database.url });
  await admin.connect();
});
afterAll(async () => {
  await sequelize.close();
  await admin.end();
  await database.drop();
});

const query = <T>(text: string, values: unknown[]) => pipelinedQuery<T>(sequelize, text, values, () => { throw new Error('not pipelined'); });
const pipelinedBackends = async () => (await admin.query<{ pid: number }>(
  `SELECT pid FROM pg_stat_activity WHERE application_name = 'circuit-pipelined' AND datname = current_database()`)).rows.map((r) => r.pid);

test('200 statements at once each get their own answer, and one that fails fails alone', async () => {
  const answers = await Promise.allSettled(Array.from({ length: 200 }, (_, i) =>
    query<{ n: number }>('SELECT 100 / $1::int AS n', [i === 57 ? 0 : 1]).then((rows) => rows[0].n)));
  expect(answers[57]).toMatchObject({ status: 'rejected', reason: { code: '22012' } });
  expect(answers.filter((a, i) => i !== 57).every((a) => a.status === 'fulfilled' && a.value === 100)).toBe(true);
  expect(await pipelinedBackends()).toHaveLength(1);
});

test('each statement is its own transaction: one that fails rolls back only itself', async () => {
  await admin.query('CREATE TABLE pipelined_probe (n int PRIMARY KEY)');
  const insert = (n: number) => query('INSERT INTO pipelined_probe (n) VALUES ($1)', [n]);
  const results = await Promise.allSettled([insert(1), insert(1), insert(2)]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect((await admin.query('SELECT n FROM pipelined_probe ORDER BY n')).rows).toEqual([{ n: 1 }, { n: 2 }]);
});

test('after its backend is killed, the next statement goes down a new connection', async () => {
  await query('SELECT 1', []);
  const [before] = await pipelinedBackends();
  await admin.query('SELECT pg_terminate_backend($1)', [before]);
  // The client learns of the loss when the socket closes; a statement racing it fails, as on any connection.
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(await query<{ one: number }>('SELECT 1 AS one', [])).toEqual([{ one: 1 }]);
  const after = await pipelinedBackends();
  expect(after).toHaveLength(1);
  expect(after[0]).not.toBe(before);
});

test('closing the Sequelize handle closes its pipelined connection; a handle without one falls back', async () => {
  const other = createSequelize(database.url, 1);
  await pipelinedQuery(other, 'SELECT 1', [], () => { throw new Error('not pipelined'); });
  expect(await pipelinedBackends()).toHaveLength(2);
  await other.close();
  const began = Date.now();
  while ((await pipelinedBackends()).length > 1 && Date.now() - began < 5_000) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await pipelinedBackends()).toHaveLength(1);
  const { Sequelize: Plain } = await import('sequelize');
  const plain = new Plain(database.url, { dialect: 'postgres', logging: false });
  try {
    expect(await pipelinedQuery(plain, 'SELECT 2 AS two', [], () => preparedQuery(plain, 'SELECT 2 AS two', []))).toEqual([{ two: 2 }]);
  } finally {
    await plain.close();
  }
});
