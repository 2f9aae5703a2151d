import { Op, QueryTypes } from 'sequelize';
import type { User } from '../src/models';
import { CircuitRun } from '../src/models/CircuitRun';
import { RUN_RULES, RunAction, readableRunsWhere, runPermits, runsWhere } from '../src/policies/run.policy';
import { ruleSql } from '../src/policies/visibility';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, readSse, submitRun, waitForRun } from './support/run-factories';
import { cellsOf } from './support/policy-table';

/**
 * The run policy as tables, through REST: who may read, debug, cancel, decide the approval steps of
 * and see the webhook deliveries of a run (and get a signed URL of its event stream) (role × visibility × action → exact status; `error`: whether the failed run's error is
 * shown, or the status when the run is not readable), and who may start one (circuit visibility ×
 * role × is_public → status). A run is its starter's: neither the circuit's owner nor an admin has a
 * say over someone else's run. Then the where and SQL forms against the predicate, on PostgreSQL.
 */
type Role = 'anonymous' | 'other' | 'starter' | 'circuitOwner' | 'admin';
type Visibility = 'public' | 'private';
type Action = 'get' | 'eventsUrl' | 'events' | 'error' | 'cancel' | 'deliveries' | 'approve' | 'replay' | 'compare';
type Row = Record<Action, number | boolean>;

// approve: these runs have ended, so the starter, whom the policy lets decide, meets 409 (nothing waits).
// replay: the starter only; compare: whoever may read the run (compared with itself here).
const STARTER: Row = {
  get: 200,
  eventsUrl: 200,
  events: 200,
  error: true,
  cancel: 200,
  deliveries: 200,
  approve: 409,
  replay: 200,
  compare: 200,
};
const READER: Row = {
  get: 200,
  eventsUrl: 200,
  events: 200,
  error: false,
  cancel: 403,
  deliveries: 403,
  approve: 403,
  replay: 403,
  compare: 200,
};
const SHUT_OUT: Row = {
  get: 403,
  eventsUrl: 403,
  events: 403,
  error: 403,
  cancel: 403,
  deliveries: 403,
  approve: 403,
  replay: 403,
  compare: 403,
};

// Only the circuit owner may make a run public, so a public run's starter is its circuit's owner.
const TABLE: Record<Visibility, Partial<Record<Role, Row>>> = {
  public: {
    anonymous: {
      get: 200,
      eventsUrl: 200,
      events: 200,
      error: false,
      cancel: 401,
      deliveries: 401,
      approve: 401,
      replay: 401,
      compare: 200,
    },
    other: READER,
    starter: STARTER,
    admin: READER,
  },
  private: {
    anonymous: {
      get: 401,
      eventsUrl: 401,
      events: 401,
      error: 401,
      cancel: 401,
      deliveries: 401,
      approve: 401,
      replay: 401,
      compare: 401,
    },
    other: SHUT_OUT,
    starter: STARTER,
    circuitOwner: SHUT_OUT,
    admin: SHUT_OUT,
  },
};

type CircuitKind = 'public' | 'protected' | 'private';
type Starter = 'anonymous' | 'other' | 'owner' | 'admin';
/** Starting a run: [as a private run, as a public run]. */
const START: Record<CircuitKind, Record<Starter, [number, number]>> = {
  public: { anonymous: [401, 401], other: [200, 403], owner: [200, 200], admin: [200, 403] },
  protected: { anonymous: [401, 401], other: [200, 403], owner: [200, 200], admin: [200, 403] },
  private: { anonymous: [401, 401], other: [403, 403], owner: [200, 200], admin: [403, 403] },
};

const FAILING = {
  query_schema: { type: 'object' },
  steps: [{ id: 'boom', kind: 'transform', expression: '$error("boom")' }],
};

let t: TestApp;
const users = {} as Record<'owner' | 'starter' | 'other' | 'admin', TestUser>;
const runs = {} as Record<Visibility, CircuitRun>;
const adaptors = {} as Record<CircuitKind, string>;

beforeAll(async () => {
  t = await startTestApp();
  users.owner = await makeUser();
  users.starter = await makeUser();
  users.other = await makeUser();
  users.admin = await makeUser({ isAdmin: true });
  const { adaptorUid } = await makeRunnableCircuit(users.owner, FAILING);
  for (const [visibility, by] of [
    ['public', users.owner],
    ['private', users.starter],
  ] as const) {
    const res = await submitRun(t, by.token, adaptorUid, { input: {}, is_public: visibility === 'public' });
    expect(res.status).toBe(200);
    expect(await waitForRun(t, res.body.payload.uid, by.token)).toMatchObject({
      state: 'EXCEPTION',
      is_public: visibility === 'public',
    });
    runs[visibility] = (await CircuitRun.findByPk(res.body.payload.uid))!;
  }
  adaptors.public = (await makeRunnableCircuit(users.owner, FAILING)).adaptorUid;
  adaptors.protected = (await makeRunnableCircuit(users.owner, FAILING, { isProtected: true })).adaptorUid;
  adaptors.private = (await makeRunnableCircuit(users.owner, FAILING, { isPrivate: true })).adaptorUid;
});
afterAll(async () => {
  await t.close();
});

function tokenOf(role: Role, visibility: Visibility): string | undefined {
  switch (role) {
    case 'anonymous':
      return undefined;
    case 'starter':
      return visibility === 'public' ? users.owner.token : users.starter.token;
    case 'circuitOwner':
      return users.owner.token;
    default:
      return users[role].token;
  }
}

async function perform(action: Action, run: CircuitRun, token: string | undefined): Promise<number | boolean> {
  switch (action) {
    case 'get':
      return (await t.rest('GET', `/circuit-runs/${run.uid}`, { token })).status;
    case 'eventsUrl': {
      // Who may read the run gets a signed URL, which then opens the stream without a token.
      const res = await t.rest('POST', `/circuit-runs/${run.uid}/events/url`, { token });
      if (res.status !== 200) return res.status;
      const url = new URL(res.body.payload.url);
      return (await readSse(`${t.url}${url.pathname}${url.search}`)).status;
    }
    case 'events':
      return (await readSse(`${t.url}/api/v1/circuit-runs/${run.uid}/events`, { token })).status;
    case 'error': {
      const res = await t.rest('GET', `/circuit-runs/${run.uid}`, { token });
      return res.status === 200 ? 'error' in res.body.payload : res.status;
    }
    case 'cancel':
      return (await t.rest('POST', `/circuit-runs/${run.uid}/cancel`, { token })).status;
    case 'deliveries':
      return (await t.rest('GET', `/circuit-runs/${run.uid}/webhook-deliveries`, { token })).status;
    case 'approve':
      return (await t.rest('POST', `/circuit-runs/${run.uid}/approvals/review`, { token, body: { approved: true } }))
        .status;
    case 'replay':
      return (await t.rest('POST', `/circuit-runs/${run.uid}/replay`, { token, body: {} })).status;
    case 'compare':
      return (await t.rest('GET', `/circuit-runs/${run.uid}/compare/${run.uid}`, { token })).status;
  }
}

const cases = cellsOf(TABLE);

test.each(cases)('%s run, %s caller, %s → %p', async (visibility, role, action, expected) => {
  expect(await perform(action, runs[visibility], tokenOf(role, visibility))).toBe(expected);
});

const starts: [CircuitKind, Starter, boolean, number][] = [];
for (const [kind, roles] of Object.entries(START) as [CircuitKind, Record<Starter, [number, number]>][]) {
  for (const [role, [asPrivate, asPublic]] of Object.entries(roles) as [Starter, [number, number]][]) {
    starts.push([kind, role, false, asPrivate], [kind, role, true, asPublic]);
  }
}

test.each(starts)('%s circuit, %s starts a run with is_public %p → %p', async (kind, role, isPublic, expected) => {
  const token = role === 'anonymous' ? undefined : users[role].token;
  expect((await submitRun(t, token, adaptors[kind], { input: {}, is_public: isPublic })).status).toBe(expected);
});

describe('the derived forms select exactly what runPermits allows', () => {
  const viewers: [string, () => User | null][] = [
    ['anonymous', () => null],
    ['starter', () => users.starter.user],
    ['circuit owner', () => users.owner.user],
    ['other', () => users.other.user],
    ['admin', () => users.admin.user],
  ];
  const ours = () => Object.values(runs).map((run) => run.uid);
  const allowed = (viewer: User | null, action: RunAction) =>
    (Object.keys(runs) as Visibility[]).filter((visibility) => runPermits(viewer, runs[visibility], action)).sort();
  const visibilityOf = (uid: string) =>
    (Object.keys(runs) as Visibility[]).find((visibility) => runs[visibility].uid === uid)!;

  test.each(viewers)('%s: readableRunsWhere', async (_name, viewer) => {
    const found = await CircuitRun.findAll({ where: { [Op.and]: [readableRunsWhere(viewer()), { uid: ours() }] } });
    expect(found.map((run) => visibilityOf(run.uid)).sort()).toEqual(allowed(viewer(), 'read'));
  });

  test.each(viewers)(
    '%s: runsWhere of every action (what a bulk cancel or replay by filter may touch)',
    async (_name, viewer) => {
      for (const action of Object.keys(RUN_RULES) as RunAction[]) {
        const found = await CircuitRun.findAll({ where: { [Op.and]: [runsWhere(viewer(), action), { uid: ours() }] } });
        expect({ action, runs: found.map((run) => visibilityOf(run.uid)).sort() }).toEqual({
          action,
          runs: allowed(viewer(), action),
        });
      }
    },
  );

  test.each(viewers)('%s: the SQL form of every action', async (_name, viewer) => {
    for (const action of Object.keys(RUN_RULES) as RunAction[]) {
      const where = ruleSql(RUN_RULES[action], { ownerColumn: 'user_uid' }, viewer(), 'r');
      const rows = await t.app.services.sequelize.query<{ uid: string }>(
        `SELECT r.uid FROM circuit_runs r WHERE r.uid IN (:ours) AND ${where.sql}`,
        { type: QueryTypes.SELECT, replacements: { ours: ours(), ...where.replacements } },
      );
      expect({ action, runs: rows.map((r) => visibilityOf(r.uid)).sort() }).toEqual({
        action,
        runs: allowed(viewer(), action),
      });
    }
  });

  test('the public runs of a circuit are what anyone may read', () => {
    expect(readableRunsWhere(null)).toEqual({ is_public: true });
  });
});
