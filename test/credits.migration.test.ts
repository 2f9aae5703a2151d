import crypto from 'node:crypto';
import { Client } from 'pg';
import { QueryTypes, type Sequelize } from 'sequelize';
import { databaseUrl } from './support/database';
import { createSequelize } from '../src/db/sequelize';
import { migrate } from '../src/db/migrate';
import { createMigrator } from '../src/db/migrator';

let name: string;
let sequelize: Sequelize;
const admin = () => new Client({ connectionString: process.env.TEST_PG_ADMIN_URL });

beforeAll(async () => {
  name = `m_${crypto.randomBytes(6).toString('hex')}`;
  const client = admin();
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  sequelize = createSequelize(databaseUrl(name), 2);
});
afterAll(async () => {
  await sequelize?.close();
  const client = admin();
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.end();
});

test('migration 0006 turns existing balances into opening grants: for every user the ledger sums to the balance', async () => {
  await createMigrator(sequelize).up({ to: '0004-blobs-web' });
  const q = (sql: string, bind: unknown[] = []) =>
    sequelize.query<Record<string, any>>(sql, { bind, type: QueryTypes.SELECT });
  // Before the ledger recorded grants: balances granted by hand, and charges of earlier runs.
  const [rich] = await q(
    `INSERT INTO users (uid, username, credits, created_at) VALUES (gen_random_uuid(), 'rich', 7, now() - interval '2 days') RETURNING uid`,
  );
  const [broke] = await q(
    `INSERT INTO users (uid, username, credits) VALUES (gen_random_uuid(), 'broke', 0) RETURNING uid`,
  );
  const [spent] = await q(
    `INSERT INTO users (uid, username, credits) VALUES (gen_random_uuid(), 'spent', 0) RETURNING uid`,
  );
  const [circuit] = await q(
    `INSERT INTO circuits (uid, owner_uid, name) VALUES (gen_random_uuid(), $1, 'c') RETURNING uid`,
    [rich.uid],
  );
  const [version] = await q(
    `INSERT INTO circuit_versions (uid, circuit_uid, number, definition) VALUES (gen_random_uuid(), $1, 1, '{}') RETURNING uid`,
    [circuit.uid],
  );
  for (const [user, amount, after] of [
    [rich.uid, 2, 9],
    [rich.uid, 1, 7],
    [spent.uid, 3, 0],
  ] as const) {
    const [run] = await q(
      `INSERT INTO circuit_runs (uid, user_uid, circuit_uid, circuit_version_uid, input, state, ended_at) VALUES (gen_random_uuid(), $1, $2, $3, '{}', 'COMPLETED', now()) RETURNING uid`,
      [user, circuit.uid, version.uid],
    );
    await q(`INSERT INTO credit_ledger (user_uid, run_uid, cost, amount, balance_after) VALUES ($1, $2, $3, $3, $4)`, [
      user,
      run.uid,
      amount,
      after,
    ]);
  }

  await migrate(sequelize);

  const sums = await q(`SELECT u.username, u.credits::int AS credits, COALESCE(sum(l.amount), 0)::int AS ledger
                          FROM users u LEFT JOIN credit_ledger l ON l.user_uid = u.uid GROUP BY u.uid ORDER BY u.username`);
  expect(sums).toEqual([
    { username: 'broke', credits: 0, ledger: 0 },
    { username: 'rich', credits: 7, ledger: 7 },
    { username: 'spent', credits: 0, ledger: 0 },
  ]);
  const grants = await q(
    `SELECT user_uid, amount::int AS amount, balance_after::int AS balance_after, run_uid, cost FROM credit_ledger WHERE kind = 'grant' ORDER BY amount`,
  );
  expect(grants).toEqual([
    { user_uid: spent.uid, amount: 3, balance_after: 3, run_uid: null, cost: null },
    { user_uid: rich.uid, amount: 10, balance_after: 10, run_uid: null, cost: null },
  ]);
  const charges = await q(`SELECT amount::int AS amount FROM credit_ledger WHERE kind = 'run' ORDER BY amount`);
  expect(charges.map((c) => c.amount)).toEqual([-3, -2, -1]);
  // The opening grant comes first in the user's history.
  const [first] = await q(`SELECT kind FROM credit_ledger WHERE user_uid = $1 ORDER BY created_at, seq LIMIT 1`, [
    rich.uid,
  ]);
  expect(first.kind).toBe('grant');
  expect(broke.uid).toBeDefined();
});
