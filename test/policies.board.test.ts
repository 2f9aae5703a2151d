import type { Circuit } from '../src/models';
import type { Board } from '../src/models/boards';
import { startTestApp, TestApp } from './support/app';
import { makeBoard } from './support/board-factories';
import { makeCircuit, makeUser, TestUser } from './support/factories';
import { cellsOf } from './support/policy-table';

/**
 * The board policy as a table: role × visibility × action → the exact HTTP status through REST
 * (ping: always 200, the cell is its boolean payload). Admins have no say over others' boards.
 */
type Role = 'anonymous' | 'other' | 'owner' | 'admin';
type Visibility = 'public' | 'private';
type Action = 'get' | 'getByName' | 'circuits' | 'ping' | 'star' | 'update' | 'addCircuit' | 'removeCircuit';
type Row = Record<Action, number | boolean>;

const OWNER: Row = {
  get: 200,
  getByName: 200,
  circuits: 200,
  ping: true,
  star: 200,
  update: 200,
  addCircuit: 200,
  removeCircuit: 200,
};
const READER: Row = {
  get: 200,
  getByName: 200,
  circuits: 200,
  ping: true,
  star: 200,
  update: 403,
  addCircuit: 403,
  removeCircuit: 403,
};
const SHUT_OUT: Row = {
  get: 403,
  getByName: 403,
  circuits: 403,
  ping: false,
  star: 403,
  update: 403,
  addCircuit: 403,
  removeCircuit: 403,
};

const TABLE: Record<Visibility, Record<Role, Row>> = {
  public: {
    anonymous: {
      get: 200,
      getByName: 200,
      circuits: 200,
      ping: true,
      star: 401,
      update: 401,
      addCircuit: 401,
      removeCircuit: 401,
    },
    other: READER,
    owner: OWNER,
    admin: READER,
  },
  private: {
    anonymous: {
      get: 401,
      getByName: 401,
      circuits: 401,
      ping: false,
      star: 401,
      update: 401,
      addCircuit: 401,
      removeCircuit: 401,
    },
    other: SHUT_OUT,
    owner: OWNER,
    admin: SHUT_OUT,
  },
};

let t: TestApp;
let circuit: Circuit;
const users = {} as Record<Exclude<Role, 'anonymous'>, TestUser>;
const boards = {} as Record<Visibility, Board>;

beforeAll(async () => {
  t = await startTestApp();
  users.owner = await makeUser();
  users.other = await makeUser();
  users.admin = await makeUser({ isAdmin: true });
  ({ circuit } = await makeCircuit(users.owner, {}, null));
  boards.public = await makeBoard(users.owner, { name: 'pub' });
  boards.private = await makeBoard(users.owner, { name: 'priv', isPrivate: true });
});
afterAll(async () => {
  await t.close();
});

async function perform(action: Action, board: Board, token: string | undefined): Promise<number | boolean> {
  const byName = `/users/${users.owner.username}/boards/${board.name}`;
  switch (action) {
    case 'get':
      return (await t.rest('GET', `/boards/${board.uid}`, { token })).status;
    case 'getByName':
      return (await t.rest('GET', `/boards/by-username/${users.owner.username}/${board.name}`, { token })).status;
    case 'circuits':
      return (await t.rest('GET', `/boards/${board.uid}/circuits`, { token })).status;
    case 'ping': {
      const res = await t.rest('GET', `${byName}/ping`, { token });
      expect(res.status).toBe(200);
      return res.body.payload;
    }
    case 'star':
      return (await t.rest('POST', `${byName}/stars`, { token })).status;
    case 'update':
      return (await t.rest('PUT', `/boards/${board.uid}`, { token, body: { description: 'changed' } })).status;
    case 'addCircuit':
      return (await t.rest('POST', `/boards/${board.uid}/circuits`, { token, body: { circuit_uid: circuit.uid } }))
        .status;
    case 'removeCircuit':
      return (await t.rest('DELETE', `/boards/${board.uid}/circuits/${circuit.uid}`, { token })).status;
  }
}

const cases = cellsOf(TABLE);

test.each(cases)('%s board, %s caller, %s → %p', async (visibility, role, action, expected) => {
  const token = role === 'anonymous' ? undefined : users[role].token;
  // removeCircuit needs the circuit in the board to answer 200 for its owner.
  if (action === 'removeCircuit')
    await t.rest('POST', `/boards/${boards[visibility].uid}/circuits`, {
      token: users.owner.token,
      body: { circuit_uid: circuit.uid },
    });
  expect(await perform(action, boards[visibility], token)).toBe(expected);
});
