import type { Circuit } from '../src/models';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeCircuit, makeUser, TestUser } from './support/factories';
import { setCircuitAlias } from '../src/commands/set-circuit-alias';
import { cellsOf } from './support/policy-table';

/**
 * The circuit policy as a table: role × visibility × action → the exact HTTP status through REST
 * (ping: always 200, the cell is its boolean payload). The version lifecycle and the aliases
 * (aliases, the version lifecycle over REST) and the circuit's client.ts: reads answer exactly as the circuit's own GET does, writes are the owner's.
 */
type Role = 'anonymous' | 'other' | 'owner' | 'admin';
type Visibility = 'public' | 'private' | 'protected';
type Action =
  | 'getByUid'
  | 'clientModule'
  | 'getByName'
  | 'versions'
  | 'explain'
  | 'ping'
  | 'star'
  | 'update'
  | 'deprecate'
  | 'publish'
  | 'setPrimary'
  | 'aliases'
  | 'alias'
  | 'aliasHistory'
  | 'aliasPut'
  | 'aliasDelete';
type Row = Record<Action, number | boolean>;

const READ_ALIASES = { aliases: 200, alias: 200, aliasHistory: 200 };
const NO_WRITES = (status: number) => ({ publish: status, setPrimary: status, aliasPut: status, aliasDelete: status });
const NOTHING = (status: number) => ({ aliases: status, alias: status, aliasHistory: status, ...NO_WRITES(status) });
const ALL_OK: Row = {
  getByUid: 200,
  clientModule: 200,
  getByName: 200,
  versions: 200,
  explain: 200,
  ping: true,
  star: 200,
  update: 200,
  deprecate: 200,
  ...NOTHING(200),
};
const ADMIN: Row = { ...ALL_OK, update: 403, deprecate: 403, ...NO_WRITES(403) };
const ANONYMOUS_LOCKED: Row = {
  getByUid: 401,
  clientModule: 401,
  getByName: 401,
  versions: 401,
  explain: 401,
  ping: false,
  star: 401,
  update: 401,
  deprecate: 401,
  ...NOTHING(401),
};

const TABLE: Record<Visibility, Record<Role, Row>> = {
  public: {
    anonymous: {
      getByUid: 200,
      clientModule: 200,
      getByName: 200,
      versions: 200,
      explain: 200,
      ping: true,
      star: 401,
      update: 401,
      deprecate: 401,
      ...READ_ALIASES,
      ...NO_WRITES(401),
    },
    other: {
      getByUid: 200,
      clientModule: 200,
      getByName: 200,
      versions: 200,
      explain: 200,
      ping: true,
      star: 200,
      update: 403,
      deprecate: 403,
      ...READ_ALIASES,
      ...NO_WRITES(403),
    },
    owner: ALL_OK,
    admin: ADMIN,
  },
  private: {
    anonymous: ANONYMOUS_LOCKED,
    other: {
      getByUid: 403,
      clientModule: 403,
      getByName: 403,
      versions: 403,
      explain: 403,
      ping: false,
      star: 403,
      update: 403,
      deprecate: 403,
      ...NOTHING(403),
    },
    owner: ALL_OK,
    admin: ADMIN,
  },
  protected: {
    anonymous: ANONYMOUS_LOCKED,
    other: {
      getByUid: 403,
      clientModule: 403,
      getByName: 403,
      versions: 403,
      explain: 403,
      ping: false,
      star: 200,
      update: 403,
      deprecate: 403,
      ...NOTHING(403),
    },
    owner: ALL_OK,
    admin: ADMIN,
  },
};

let t: TestApp;
const users = {} as Record<Exclude<Role, 'anonymous'>, TestUser>;
const circuits = {} as Record<Visibility, Circuit>;

beforeAll(async () => {
  t = await startTestApp();
  users.owner = await makeUser();
  users.other = await makeUser();
  users.admin = await makeUser({ isAdmin: true });
  circuits.public = (await makeCircuit(users.owner, { name: 'pub' })).circuit;
  circuits.private = (await makeCircuit(users.owner, { name: 'priv', isPrivate: true })).circuit;
  circuits.protected = (await makeCircuit(users.owner, { name: 'prot', isProtected: true })).circuit;
  // Each circuit's alias `stable` is read and re-PUT; `doomed` is deleted by the one caller allowed to.
  for (const circuit of Object.values(circuits)) {
    for (const name of ['stable', 'doomed'])
      await setCircuitAlias(circuit.sequelize, circuit, name, [
        { version_uid: circuit.primary_version_uid!, weight: 100 },
      ]);
  }
});
afterAll(async () => {
  await t.close();
});

async function perform(action: Action, circuit: Circuit, token: string | undefined): Promise<number | boolean> {
  const byName = `/users/${users.owner.username}/circuits/${circuit.name}`;
  switch (action) {
    case 'getByUid':
      return (await t.rest('GET', `/circuits/${circuit.uid}`, { token })).status;
    case 'clientModule':
      return (await t.rest('GET', `/circuits/${circuit.uid}/client.ts`, { token })).status;
    case 'getByName':
      return (await t.rest('GET', byName, { token })).status;
    case 'versions':
      return (await t.rest('GET', `/circuits/${circuit.uid}/circuit-versions`, { token })).status;
    case 'explain':
      return (await t.rest('GET', `${byName}/explain`, { token })).status;
    case 'ping': {
      const res = await t.rest('GET', `${byName}/ping`, { token });
      expect(res.status).toBe(200);
      return res.body.payload;
    }
    case 'star':
      return (await t.rest('POST', `${byName}/stars`, { token })).status;
    case 'update':
      return (await t.rest('PUT', byName, { token, body: { license_type: 'MIT' } })).status;
    case 'deprecate':
      return (await t.rest('PUT', `/circuits/${circuit.uid}/deprecate`, { token })).status;
    case 'publish':
      return (await t.rest('POST', `/circuits/${circuit.uid}/versions`, { token, body: HELLO_DEFINITION })).status;
    case 'setPrimary':
      return (
        await t.rest('PUT', `/circuits/${circuit.uid}/primary`, {
          token,
          body: { version_uid: circuit.primary_version_uid },
        })
      ).status;
    case 'aliases':
      return (await t.rest('GET', `/circuits/${circuit.uid}/aliases`, { token })).status;
    case 'alias':
      return (await t.rest('GET', `/circuits/${circuit.uid}/aliases/stable`, { token })).status;
    case 'aliasHistory':
      return (await t.rest('GET', `/circuits/${circuit.uid}/aliases/stable/history`, { token })).status;
    case 'aliasPut': {
      const routes = [{ version_uid: circuit.primary_version_uid, weight: 100 }];
      return (await t.rest('PUT', `/circuits/${circuit.uid}/aliases/stable`, { token, body: { routes } })).status;
    }
    case 'aliasDelete':
      return (await t.rest('DELETE', `/circuits/${circuit.uid}/aliases/doomed`, { token })).status;
  }
}

const cases = cellsOf(TABLE);

test.each(cases)('%s circuit, %s caller, %s → %p', async (visibility, role, action, expected) => {
  const token = role === 'anonymous' ? undefined : users[role].token;
  expect(await perform(action, circuits[visibility], token)).toBe(expected);
});
