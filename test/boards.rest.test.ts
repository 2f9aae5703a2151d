import { Circuit } from '../src/models';
import { BoardCircuit, BoardStar } from '../src/models/boards';
import { useTestApp } from './support/app';
import { makeCircuit, makeUser, TestUser } from './support/factories';
import { addToBoard, makeBoard, starBoardAs } from './support/board-factories';

const t = useTestApp();
let owner: TestUser;
let other: TestUser;
beforeAll(async () => {
  owner = await makeUser();
  other = await makeUser();
});

const UNKNOWN_UID = '00000000-0000-4000-8000-000000000000';

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

describe('POST /boards', () => {
  test('creates a board with the documented defaults and returns it in the success envelope', async () => {
    const res = await t.rest('POST', '/boards', {
      token: owner.token,
      body: { name: 'favourites', description: 'the best' },
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('success');
    expect(res.body.payload).toEqual({
      uid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'favourites',
      description: 'the best',
      username: owner.username,
      is_private: false,
      is_protected: false,
      circuit_count: 0,
      star_count: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  test('a second board of the same name for the same owner is 409 Conflict; another owner may use it', async () => {
    await t.rest('POST', '/boards', { token: owner.token, body: { name: 'dup' } });
    const again = await t.rest('POST', '/boards', { token: owner.token, body: { name: 'dup', is_private: true } });
    expectError(again, 409, 'Conflict');
    const otherOwner = await t.rest('POST', '/boards', { token: other.token, body: { name: 'dup' } });
    expect(otherOwner.status).toBe(200);
  });

  test('bad input is a 400 BadClientData', async () => {
    expectError(await t.rest('POST', '/boards', { token: owner.token, body: {} }), 400, 'BadClientData');
    expectError(await t.rest('POST', '/boards', { token: owner.token, body: { name: '' } }), 400, 'BadClientData');
    expectError(
      await t.rest('POST', '/boards', { token: owner.token, body: { name: 'has space' } }),
      400,
      'BadClientData',
    );
    expectError(
      await t.rest('POST', '/boards', { token: owner.token, body: { name: 'x'.repeat(101) } }),
      400,
      'BadClientData',
    );
    expectError(
      await t.rest('POST', '/boards', { token: owner.token, body: { name: 'ok', is_private: 'yes' } }),
      400,
      'BadClientData',
    );
    expectError(
      await t.rest('POST', '/boards', { token: owner.token, body: { name: 'ok', colour: 'red' } }),
      400,
      'BadClientData',
    );
    expectError(await t.rest('POST', '/boards', { token: owner.token, rawBody: '{"name":' }), 400, 'BadClientData');
  });

  test('needs a valid token', async () => {
    expectError(await t.rest('POST', '/boards', { body: { name: 'anon' } }), 401, 'Unauthorized');
    expectError(await t.rest('POST', '/boards', { token: 'cst_nope', body: { name: 'anon' } }), 401, 'Unauthorized');
  });
});

describe('GET /boards', () => {
  test("lists only the caller's boards, newest first, paginated with defaults limit 10 and page 1", async () => {
    const lister = await makeUser();
    for (let i = 0; i < 12; i++) await makeBoard(lister, { name: `list-${String(i).padStart(2, '0')}` });
    await makeBoard(other, { name: 'not-mine' });
    const first = await t.rest('GET', '/boards', { token: lister.token });
    expect(first.status).toBe(200);
    expect(first.body.meta).toEqual({ total_count: 12, limit: 10, page: 1 });
    expect(first.body.data).toHaveLength(10);
    expect(first.body.data[0].name).toBe('list-11');
    expect(first.body.data.every((b: any) => b.username === lister.username)).toBe(true);
    const second = await t.rest('GET', '/boards?limit=10&page=2', { token: lister.token });
    expect(second.body.meta).toEqual({ total_count: 12, limit: 10, page: 2 });
    expect(second.body.data.map((b: any) => b.name)).toEqual(['list-01', 'list-00']);
    const beyond = await t.rest('GET', '/boards?page=9', { token: lister.token });
    expect(beyond.body).toEqual({ meta: { total_count: 12, limit: 10, page: 9 }, data: [] });
  });

  test('bad pagination is 400; no token is 401', async () => {
    for (const q of ['limit=0', 'limit=-1', 'limit=abc', 'page=0', 'page=1.5', 'page=x']) {
      expectError(await t.rest('GET', `/boards?${q}`, { token: owner.token }), 400, 'BadClientData');
    }
    expectError(await t.rest('GET', '/boards'), 401, 'Unauthorized');
  });
});

describe('reading a board: anonymous, other user and owner × public and private', () => {
  const cases = [
    { who: 'anonymous', visibility: 'public', status: 200 },
    { who: 'other', visibility: 'public', status: 200 },
    { who: 'owner', visibility: 'public', status: 200 },
    { who: 'anonymous', visibility: 'private', status: 401 },
    { who: 'other', visibility: 'private', status: 403 },
    { who: 'owner', visibility: 'private', status: 200 },
  ] as const;
  const tokenOf = (who: string) => (who === 'owner' ? owner.token : who === 'other' ? other.token : undefined);

  test.each(cases)(
    '$who reading a $visibility board gets $status by uid, by name and for its circuits',
    async ({ who, visibility, status }) => {
      const board = await makeBoard(owner, { isPrivate: visibility === 'private' });
      const token = tokenOf(who);
      const paths = [
        `/boards/${board.uid}`,
        `/boards/by-username/${owner.username}/${board.name}`,
        `/boards/${board.uid}/circuits`,
      ];
      for (const path of paths) {
        const res = await t.rest('GET', path, { token });
        expect({ path, status: res.status }).toEqual({ path, status });
        if (status === 401) expect(res.body.error.code).toBe('Unauthorized');
        if (status === 403) expect(res.body.error.code).toBe('NotAllowed');
      }
      const ping = await t.rest('GET', `/users/${owner.username}/boards/${board.name}/ping`, { token });
      expect(ping.status).toBe(200);
      expect(ping.body).toEqual({ status: 'success', payload: status === 200 });
    },
  );

  test('the board object carries uid, name, description, owner username, flags, counts and timestamps', async () => {
    const board = await makeBoard(owner, { description: 'd', isProtected: true });
    const res = await t.rest('GET', `/boards/by-username/${owner.username}/${board.name}`);
    expect(res.body.payload).toMatchObject({
      uid: board.uid,
      name: board.name,
      description: 'd',
      username: owner.username,
      is_private: false,
      is_protected: true,
    });
  });

  test('unknown and malformed uids and names are 404 NotFound; ping is false for an unknown board', async () => {
    expectError(await t.rest('GET', `/boards/${UNKNOWN_UID}`), 404, 'NotFound');
    expectError(await t.rest('GET', '/boards/not-a-uid'), 404, 'NotFound');
    expectError(await t.rest('GET', `/boards/${UNKNOWN_UID}/circuits`), 404, 'NotFound');
    expectError(await t.rest('GET', '/boards/not-a-uid/circuits'), 404, 'NotFound');
    expectError(await t.rest('GET', `/boards/by-username/${owner.username}/nope`), 404, 'NotFound');
    expectError(await t.rest('GET', '/boards/by-username/nobody-here/nope'), 404, 'NotFound');
    const ping = await t.rest('GET', `/users/${owner.username}/boards/nope/ping`);
    expect(ping.body).toEqual({ status: 'success', payload: false });
  });

  test('an invalid token is 401 even where a token is optional', async () => {
    const board = await makeBoard(owner);
    expectError(await t.rest('GET', `/boards/${board.uid}`, { token: 'cst_invalid' }), 401, 'Unauthorized');
  });
});

describe('PUT /boards/:board_uid', () => {
  test('the owner changes only the fields sent', async () => {
    const board = await makeBoard(owner, { description: 'keep me' });
    const res = await t.rest('PUT', `/boards/${board.uid}`, { token: owner.token, body: { is_private: true } });
    expect(res.status).toBe(200);
    expect(res.body.payload).toMatchObject({
      name: board.name,
      description: 'keep me',
      is_private: true,
      is_protected: false,
    });
    const renamed = await t.rest('PUT', `/boards/${board.uid}`, {
      token: owner.token,
      body: { name: `${board.name}-2`, description: '', is_protected: true },
    });
    expect(renamed.body.payload).toMatchObject({
      name: `${board.name}-2`,
      description: '',
      is_private: true,
      is_protected: true,
    });
    const byNewName = await t.rest('GET', `/boards/by-username/${owner.username}/${board.name}-2`, {
      token: owner.token,
    });
    expect(byNewName.body.payload.uid).toBe(board.uid);
  });

  test('renaming onto a taken name is 409; a bad name is 400', async () => {
    const a = await makeBoard(owner);
    const b = await makeBoard(owner);
    expectError(
      await t.rest('PUT', `/boards/${b.uid}`, { token: owner.token, body: { name: a.name } }),
      409,
      'Conflict',
    );
    expectError(
      await t.rest('PUT', `/boards/${b.uid}`, { token: owner.token, body: { name: 'bad name' } }),
      400,
      'BadClientData',
    );
    const same = await t.rest('PUT', `/boards/${b.uid}`, { token: owner.token, body: { name: b.name } });
    expect(same.status).toBe(200);
  });

  test('is for the owner only: other user 403, anonymous 401, unknown 404', async () => {
    const board = await makeBoard(owner);
    expectError(
      await t.rest('PUT', `/boards/${board.uid}`, { token: other.token, body: { description: 'x' } }),
      403,
      'NotAllowed',
    );
    expectError(await t.rest('PUT', `/boards/${board.uid}`, { body: { description: 'x' } }), 401, 'Unauthorized');
    expectError(
      await t.rest('PUT', `/boards/${UNKNOWN_UID}`, { token: owner.token, body: { description: 'x' } }),
      404,
      'NotFound',
    );
    expectError(
      await t.rest('PUT', '/boards/nope', { token: owner.token, body: { description: 'x' } }),
      404,
      'NotFound',
    );
  });
});

describe('DELETE /boards/:board_uid', () => {
  test('deletes the board, its memberships and stars, but never its circuits; payload true', async () => {
    const board = await makeBoard(owner);
    const { circuit } = await makeCircuit(owner, {}, null);
    await addToBoard(board, circuit);
    await starBoardAs(other, board);
    expectError(await t.rest('DELETE', `/boards/${board.uid}`, { token: other.token }), 403, 'NotAllowed');
    expectError(await t.rest('DELETE', `/boards/${board.uid}`), 401, 'Unauthorized');
    const res = await t.rest('DELETE', `/boards/${board.uid}`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'success', payload: true });
    expectError(await t.rest('GET', `/boards/${board.uid}`, { token: owner.token }), 404, 'NotFound');
    expectError(await t.rest('DELETE', `/boards/${board.uid}`, { token: owner.token }), 404, 'NotFound');
    expect(await Circuit.findByPk(circuit.uid)).not.toBeNull();
    expect(await BoardCircuit.count({ where: { board_uid: board.uid } })).toBe(0);
    expect(await BoardStar.count({ where: { board_uid: board.uid } })).toBe(0);
  });
});

describe('board circuits', () => {
  test('the owner adds circuits (idempotently) and lists them newest first with the circuit objects', async () => {
    const board = await makeBoard(owner);
    const { circuit: first } = await makeCircuit(owner, {}, null);
    const { circuit: second } = await makeCircuit(other, {}, null);
    const added = await t.rest('POST', `/boards/${board.uid}/circuits`, {
      token: owner.token,
      body: { circuit_uid: first.uid },
    });
    expect(added.status).toBe(200);
    expect(added.body.payload).toMatchObject({ uid: board.uid, circuit_count: 1 });
    await t.rest('POST', `/boards/${board.uid}/circuits`, { token: owner.token, body: { circuit_uid: second.uid } });
    const again = await t.rest('POST', `/boards/${board.uid}/circuits`, {
      token: owner.token,
      body: { circuit_uid: first.uid },
    });
    expect(again.status).toBe(200);
    expect(again.body.payload.circuit_count).toBe(2);

    const list = await t.rest('GET', `/boards/${board.uid}/circuits`);
    expect(list.status).toBe(200);
    expect(list.body.meta).toEqual({ total_count: 2, limit: 10, page: 1 });
    expect(list.body.data.map((c: any) => c.uid).sort()).toEqual([first.uid, second.uid].sort());
    expect(list.body.data.find((c: any) => c.uid === second.uid)).toMatchObject({
      name: second.name,
      username: other.username,
      is_private: false,
    });
    const paged = await t.rest('GET', `/boards/${board.uid}/circuits?limit=1&page=2`);
    expect(paged.body.meta).toEqual({ total_count: 2, limit: 1, page: 2 });
    expect(paged.body.data).toHaveLength(1);
    expectError(await t.rest('GET', `/boards/${board.uid}/circuits?limit=0`), 400, 'BadClientData');
  });

  test('circuits the caller may not list are neither shown nor counted', async () => {
    const board = await makeBoard(owner);
    const { circuit: publicOne } = await makeCircuit(owner, {}, null);
    const { circuit: privateOne } = await makeCircuit(owner, { isPrivate: true }, null);
    const { circuit: protectedOne } = await makeCircuit(other, { isProtected: true }, null);
    const { circuit: laterPrivate } = await makeCircuit(other, {}, null);
    await addToBoard(board, publicOne, privateOne, protectedOne, laterPrivate);
    await laterPrivate.update({ is_private: true });

    const anonymous = await t.rest('GET', `/boards/${board.uid}/circuits`);
    expect(anonymous.body.meta.total_count).toBe(2);
    expect(anonymous.body.data.map((c: any) => c.uid).sort()).toEqual([publicOne.uid, protectedOne.uid].sort());
    expect((await t.rest('GET', `/boards/${board.uid}`)).body.payload.circuit_count).toBe(2);

    const asOwner = await t.rest('GET', `/boards/${board.uid}/circuits`, { token: owner.token });
    expect(asOwner.body.meta.total_count).toBe(3);
    expect(asOwner.body.data.map((c: any) => c.uid)).not.toContain(laterPrivate.uid);
    expect((await t.rest('GET', `/boards/${board.uid}`, { token: owner.token })).body.payload.circuit_count).toBe(3);

    const asOther = await t.rest('GET', `/boards/${board.uid}/circuits`, { token: other.token });
    expect(asOther.body.meta.total_count).toBe(3);
    expect(asOther.body.data.map((c: any) => c.uid)).toContain(laterPrivate.uid);
    expect(asOther.body.data.map((c: any) => c.uid)).not.toContain(privateOne.uid);
  });

  test("adding another user's private circuit is 403; unknown or malformed circuits 404; no circuit_uid 400", async () => {
    const board = await makeBoard(owner);
    const { circuit: theirs } = await makeCircuit(other, { isPrivate: true }, null);
    expectError(
      await t.rest('POST', `/boards/${board.uid}/circuits`, { token: owner.token, body: { circuit_uid: theirs.uid } }),
      403,
      'NotAllowed',
    );
    expectError(
      await t.rest('POST', `/boards/${board.uid}/circuits`, { token: owner.token, body: { circuit_uid: UNKNOWN_UID } }),
      404,
      'NotFound',
    );
    expectError(
      await t.rest('POST', `/boards/${board.uid}/circuits`, { token: owner.token, body: { circuit_uid: 'nope' } }),
      404,
      'NotFound',
    );
    expectError(
      await t.rest('POST', `/boards/${board.uid}/circuits`, { token: owner.token, body: {} }),
      400,
      'BadClientData',
    );
    expectError(
      await t.rest('POST', `/boards/${UNKNOWN_UID}/circuits`, {
        token: owner.token,
        body: { circuit_uid: theirs.uid },
      }),
      404,
      'NotFound',
    );
    expect(await BoardCircuit.count({ where: { board_uid: board.uid } })).toBe(0);
  });

  test('only the owner adds and removes: other user 403, anonymous 401', async () => {
    const board = await makeBoard(owner);
    const { circuit } = await makeCircuit(other, {}, null);
    expectError(
      await t.rest('POST', `/boards/${board.uid}/circuits`, { token: other.token, body: { circuit_uid: circuit.uid } }),
      403,
      'NotAllowed',
    );
    expectError(
      await t.rest('POST', `/boards/${board.uid}/circuits`, { body: { circuit_uid: circuit.uid } }),
      401,
      'Unauthorized',
    );
    await addToBoard(board, circuit);
    expectError(
      await t.rest('DELETE', `/boards/${board.uid}/circuits/${circuit.uid}`, { token: other.token }),
      403,
      'NotAllowed',
    );
    expectError(await t.rest('DELETE', `/boards/${board.uid}/circuits/${circuit.uid}`), 401, 'Unauthorized');
  });

  test('removing takes the circuit out of the board only; a circuit not in the board is 404', async () => {
    const board = await makeBoard(owner);
    const { circuit } = await makeCircuit(owner, {}, null);
    await addToBoard(board, circuit);
    const res = await t.rest('DELETE', `/boards/${board.uid}/circuits/${circuit.uid}`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.payload).toMatchObject({ uid: board.uid, circuit_count: 0 });
    expect(await Circuit.findByPk(circuit.uid)).not.toBeNull();
    expectError(
      await t.rest('DELETE', `/boards/${board.uid}/circuits/${circuit.uid}`, { token: owner.token }),
      404,
      'NotFound',
    );
    expectError(await t.rest('DELETE', `/boards/${board.uid}/circuits/nope`, { token: owner.token }), 404, 'NotFound');
    expectError(
      await t.rest('DELETE', `/boards/${UNKNOWN_UID}/circuits/${circuit.uid}`, { token: owner.token }),
      404,
      'NotFound',
    );
  });
});

describe('board stars', () => {
  test('star, read the star record, star again (idempotent), unstar (idempotent), then 404', async () => {
    const board = await makeBoard(owner);
    const path = `/users/${owner.username}/boards/${board.name}/stars`;
    expectError(await t.rest('GET', path, { token: other.token }), 404, 'NotFound');

    const starred = await t.rest('POST', path, { token: other.token });
    expect(starred.status).toBe(200);
    expect(starred.body.payload).toEqual({
      user_uid: other.user.uid,
      board_uid: board.uid,
      created_at: expect.any(String),
    });
    const again = await t.rest('POST', path, { token: other.token });
    expect(again.body.payload).toEqual(starred.body.payload);

    const read = await t.rest('GET', path, { token: other.token });
    expect(read.body).toEqual({ status: 'success', payload: starred.body.payload });
    expectError(await t.rest('GET', path, { token: owner.token }), 404, 'NotFound');
    expect((await t.rest('GET', `/boards/${board.uid}`)).body.payload.star_count).toBe(1);

    expect((await t.rest('DELETE', path, { token: other.token })).body).toEqual({ status: 'success', payload: true });
    expect((await t.rest('DELETE', path, { token: other.token })).body).toEqual({ status: 'success', payload: true });
    expectError(await t.rest('GET', path, { token: other.token }), 404, 'NotFound');
    expect((await t.rest('GET', `/boards/${board.uid}`)).body.payload.star_count).toBe(0);
  });

  test('stars need a token and a board the caller can read', async () => {
    const privateBoard = await makeBoard(owner, { isPrivate: true });
    const path = `/users/${owner.username}/boards/${privateBoard.name}/stars`;
    for (const method of ['GET', 'POST', 'DELETE']) {
      expectError(await t.rest(method, path), 401, 'Unauthorized');
      expectError(await t.rest(method, path, { token: other.token }), 403, 'NotAllowed');
      expectError(
        await t.rest(method, `/users/${owner.username}/boards/no-such-board/stars`, { token: other.token }),
        404,
        'NotFound',
      );
    }
    expect((await t.rest('POST', path, { token: owner.token })).status).toBe(200);
  });
});
