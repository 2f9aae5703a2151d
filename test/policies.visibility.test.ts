import { QueryTypes } from 'sequelize';
import { Circuit, User } from '../src/models';
import {
  CIRCUIT_RULES,
  CircuitAction,
  circuitPermits,
  listableCircuitsSql,
  listableCircuitsWhere,
} from '../src/policies/circuit.policy';
import { visibleProfilesSql } from '../src/policies/user.policy';
import { ruleSql } from '../src/policies/visibility';
import { startTestApp, TestApp } from './support/app';
import { makeCircuit, makeUser } from './support/factories';

/**
 * The circuit visibility rule is stated once (CIRCUIT_RULES); the predicate, the SQL and the
 * Sequelize where forms are derived from it. These tests pin the predicate to the API contract's table and
 * prove that every derived form selects exactly the rows the predicate allows, on real PostgreSQL.
 */
type Viewer = 'anonymous' | 'other' | 'owner' | 'admin';
type Kind = 'public' | 'protected' | 'private' | 'privateProtected';
const ACTIONS: CircuitAction[] = ['list', 'read', 'run', 'manage'];

// The API contract's table of circuit visibility, written out by hand: viewer → kind → actions allowed.
const EXPECTED: Record<Viewer, Record<Kind, CircuitAction[]>> = {
  anonymous: { public: ['list', 'read'], protected: ['list'], private: [], privateProtected: [] },
  other: { public: ['list', 'read', 'run'], protected: ['list', 'run'], private: [], privateProtected: [] },
  owner: { public: ACTIONS, protected: ACTIONS, private: ACTIONS, privateProtected: ACTIONS },
  admin: {
    public: ['list', 'read', 'run'],
    protected: ['list', 'read', 'run'],
    private: ['list', 'read'],
    privateProtected: ['list', 'read'],
  },
};

let t: TestApp;
const viewers = {} as Record<Viewer, User | null>;
const circuits = {} as Record<Kind, Circuit>;

beforeAll(async () => {
  t = await startTestApp();
  const owner = await makeUser();
  viewers.anonymous = null;
  viewers.owner = owner.user;
  viewers.other = (await makeUser()).user;
  viewers.admin = (await makeUser({ isAdmin: true })).user;
  circuits.public = (await makeCircuit(owner, {}, null)).circuit;
  circuits.protected = (await makeCircuit(owner, { isProtected: true }, null)).circuit;
  circuits.private = (await makeCircuit(owner, { isPrivate: true }, null)).circuit;
  circuits.privateProtected = (await makeCircuit(owner, { isPrivate: true, isProtected: true }, null)).circuit;
});
afterAll(async () => {
  await t.close();
});

const ours = () => Object.values(circuits).map((c) => c.uid);
const allowed = (viewer: Viewer, action: CircuitAction) =>
  (Object.keys(circuits) as Kind[]).filter((kind) => circuitPermits(viewers[viewer], circuits[kind], action)).sort();
const kindOf = (uid: string) => (Object.keys(circuits) as Kind[]).find((kind) => circuits[kind].uid === uid)!;

describe.each(['anonymous', 'other', 'owner', 'admin'] as Viewer[])('%s viewer', (viewer) => {
  test.each(ACTIONS)('circuitPermits(%s) follows the table of the API contract', (action) => {
    const expected = (Object.keys(circuits) as Kind[]).filter((kind) => EXPECTED[viewer][kind].includes(action)).sort();
    expect(allowed(viewer, action)).toEqual(expected);
  });

  test.each(ACTIONS)('the SQL form of %s selects exactly what the predicate allows', async (action) => {
    const where = ruleSql(CIRCUIT_RULES[action], { ownerColumn: 'owner_uid' }, viewers[viewer], 'c');
    const rows = await t.app.services.sequelize.query<{ uid: string }>(
      `SELECT c.uid FROM circuits c WHERE c.uid IN (:ours) AND ${where.sql}`,
      { type: QueryTypes.SELECT, replacements: { ours: ours(), ...where.replacements } },
    );
    expect(rows.map((r) => kindOf(r.uid)).sort()).toEqual(allowed(viewer, action));
  });

  test('listableCircuitsSql and listableCircuitsWhere list what circuitPermits(list) allows', async () => {
    const listable = listableCircuitsSql('c', viewers[viewer]);
    const rows = await t.app.services.sequelize.query<{ uid: string }>(
      `SELECT c.uid FROM circuits c WHERE c.uid IN (:ours) AND ${listable.sql}`,
      { type: QueryTypes.SELECT, replacements: { ours: ours(), ...listable.replacements } },
    );
    expect(rows.map((r) => kindOf(r.uid)).sort()).toEqual(allowed(viewer, 'list'));
    const models = await Circuit.findAll({
      where: { ...listableCircuitsWhere(viewers[viewer]), uid: ours() } as never,
    });
    expect(models.map((c) => kindOf(c.uid)).sort()).toEqual(allowed(viewer, 'list'));
  });
});

test('search filters through the policy: what anyone may list, with the partial-index form', () => {
  expect(listableCircuitsSql('c', null)).toEqual({ sql: 'NOT c.is_private', replacements: {} });
  expect(visibleProfilesSql('u', null)).toEqual({ sql: 'NOT u.is_private', replacements: {} });
});
