import { useTestApp } from './support/app';
import { makeCircuit, makeUser, TestUser } from './support/factories';

const t = useTestApp({ searchRateLimitPerMinute: 1000 });
let owner: TestUser;
let other: TestUser;
beforeAll(async () => {
  owner = await makeUser();
  other = await makeUser();
});

const BOARD = 'uid name description username isPrivate isProtected circuitCount starCount createdAt updatedAt';

test('boards, board circuits and stars through /graphql follow the same rules as REST', async () => {
  const created = await t.gql(
    `mutation($input: CreateBoardInput!) { createBoard(input: $input) { ${BOARD} } }`,
    { input: { name: 'gql-board', isPrivate: true } },
    owner.token,
  );
  expect(created.errors).toBeUndefined();
  const board = created.data.createBoard;
  expect(board).toMatchObject({
    name: 'gql-board',
    username: owner.username,
    isPrivate: true,
    isProtected: false,
    circuitCount: 0,
    starCount: 0,
  });

  const dup = await t.gql('mutation { createBoard(input: {name: "gql-board"}) { uid } }', {}, owner.token);
  expect(dup.code).toBe('Conflict');
  expect((await t.gql('mutation { createBoard(input: {name: "anon"}) { uid } }')).code).toBe('Unauthorized');

  const read = 'query($uid: ID!) { board(uid: $uid) { uid } }';
  expect((await t.gql(read, { uid: board.uid })).code).toBe('Unauthorized');
  expect((await t.gql(read, { uid: board.uid }, other.token)).code).toBe('NotAllowed');
  expect((await t.gql(read, { uid: board.uid }, owner.token)).data.board.uid).toBe(board.uid);
  expect((await t.gql(read, { uid: 'bogus' }, owner.token)).code).toBe('NotFound');
  const byName = await t.gql(
    'query($u: String!, $n: String!) { boardByName(username: $u, name: $n) { uid } }',
    { u: owner.username, n: 'gql-board' },
    owner.token,
  );
  expect(byName.data.boardByName.uid).toBe(board.uid);

  const updated = await t.gql(
    'mutation($uid: ID!) { updateBoard(uid: $uid, input: {isPrivate: false, description: "now public"}) { name description isPrivate } }',
    { uid: board.uid },
    owner.token,
  );
  expect(updated.data.updateBoard).toEqual({ name: 'gql-board', description: 'now public', isPrivate: false });
  expect(
    (
      await t.gql(
        'mutation($uid: ID!) { updateBoard(uid: $uid, input: {name: "x"}) { uid } }',
        { uid: board.uid },
        other.token,
      )
    ).code,
  ).toBe('NotAllowed');

  const { circuit } = await makeCircuit(other, {}, null);
  const add = 'mutation($b: ID!, $c: ID!) { addCircuitToBoard(boardUid: $b, circuitUid: $c) { circuitCount } }';
  expect((await t.gql(add, { b: board.uid, c: circuit.uid }, owner.token)).data.addCircuitToBoard.circuitCount).toBe(1);
  expect((await t.gql(add, { b: board.uid, c: circuit.uid }, owner.token)).data.addCircuitToBoard.circuitCount).toBe(1);
  const list = await t.gql(
    'query($b: ID!) { boardCircuits(boardUid: $b, limit: 5) { totalCount limit page items { uid name username } } }',
    { b: board.uid },
  );
  expect(list.data.boardCircuits).toEqual({
    totalCount: 1,
    limit: 5,
    page: 1,
    items: [{ uid: circuit.uid, name: circuit.name, username: other.username }],
  });

  const mine = await t.gql(`query { myBoards { totalCount items { uid } } }`, {}, owner.token);
  expect(mine.data.myBoards).toEqual({ totalCount: 1, items: [{ uid: board.uid }] });

  const vars = { u: owner.username, n: 'gql-board' };
  const star = await t.gql(
    'mutation($u: String!, $n: String!) { starBoard(username: $u, name: $n) { userUid boardUid createdAt } }',
    vars,
    other.token,
  );
  expect(star.data.starBoard).toMatchObject({ userUid: other.user.uid, boardUid: board.uid });
  expect(
    (
      await t.gql(
        'query($u: String!, $n: String!) { boardStar(username: $u, name: $n) { boardUid } }',
        vars,
        other.token,
      )
    ).data.boardStar.boardUid,
  ).toBe(board.uid);
  expect(
    (
      await t.gql(
        'query($u: String!, $n: String!) { boardStar(username: $u, name: $n) { boardUid } }',
        vars,
        owner.token,
      )
    ).code,
  ).toBe('NotFound');
  expect(
    (await t.gql('query($u: String!, $n: String!) { boardPing(username: $u, name: $n) }', vars)).data.boardPing,
  ).toBe(true);
  expect(
    (await t.gql('mutation($u: String!, $n: String!) { unstarBoard(username: $u, name: $n) }', vars, other.token)).data
      .unstarBoard,
  ).toBe(true);

  const remove = 'mutation($b: ID!, $c: ID!) { removeCircuitFromBoard(boardUid: $b, circuitUid: $c) { circuitCount } }';
  expect(
    (await t.gql(remove, { b: board.uid, c: circuit.uid }, owner.token)).data.removeCircuitFromBoard.circuitCount,
  ).toBe(0);
  expect((await t.gql(remove, { b: board.uid, c: circuit.uid }, owner.token)).code).toBe('NotFound');

  expect((await t.gql('mutation($uid: ID!) { deleteBoard(uid: $uid) }', { uid: board.uid }, other.token)).code).toBe(
    'NotAllowed',
  );
  expect(
    (await t.gql('mutation($uid: ID!) { deleteBoard(uid: $uid) }', { uid: board.uid }, owner.token)).data.deleteBoard,
  ).toBe(true);
  expect((await t.gql(read, { uid: board.uid }, owner.token)).code).toBe('NotFound');
});

test('search through /graphql returns a union of circuit and user results', async () => {
  const maker = await makeUser({ username: 'quokka-fan', name: 'Quokka Fan' });
  await makeCircuit(maker, { name: 'quokka', description: 'counts quokkas' }, null);
  const res = await t.gql(`query { search(search: "quokka", type: all, limit: 5) {
    totalCount limit page
    items { __typename ... on CircuitSearchResult { type uid name description username } ... on UserSearchResult { type uid username name bio } }
  } }`);
  expect(res.errors).toBeUndefined();
  expect(res.data.search.totalCount).toBe(2);
  expect(res.data.search.items[0]).toMatchObject({
    __typename: 'CircuitSearchResult',
    type: 'circuit',
    name: 'quokka',
    username: 'quokka-fan',
  });
  expect(res.data.search.items[1]).toMatchObject({
    __typename: 'UserSearchResult',
    type: 'user',
    username: 'quokka-fan',
    name: 'Quokka Fan',
    bio: '',
  });
  expect((await t.gql('query { search(search: "  ") { totalCount } }')).code).toBe('BadClientData');
});
