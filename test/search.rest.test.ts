import { QueryTypes } from 'sequelize';
import { User } from '../src/models';
import { SEARCH_MATCH_BOUND } from '../src/graphql/search/search.query';
import { useTestApp } from './support/app';
import { makeCircuit, makeUser, TestUser } from './support/factories';

const t = useTestApp({ searchRateLimitPerMinute: 100_000 });
let alice: TestUser;
let hidden: TestUser;
beforeAll(async () => {
  alice = await makeUser({ username: 'alice-walker', name: 'Alice Walker', bio: 'Builds translation pipelines' });
  hidden = await makeUser({ username: 'secret-agent', name: 'Translation Spy', bio: 'translation', isPrivate: true });
  await makeCircuit(alice, { name: 'translate', description: 'Translates text between languages' }, null);
  await makeCircuit(alice, { name: 'translate-pro', description: 'Better translation with glossaries' }, null);
  await makeCircuit(alice, { name: 'summarise', description: 'Summarises and then translates a document' }, null);
  await makeCircuit(alice, { name: 'translate-private', description: 'translate secret', isPrivate: true }, null);
  await makeCircuit(
    alice,
    { name: 'translate-protected', description: 'a protected translator', isProtected: true },
    null,
  );
  await makeCircuit(hidden, { name: 'spy-tool', description: 'public circuit of a private profile' }, null);
});

const search = (query: string, token?: string) => t.rest('GET', `/search?${query}`, { token });
const names = (body: any) => body.data.map((d: any) => (d.type === 'circuit' ? d.name : d.username));

test('an exact name match ranks first, and the items have exactly the fields of the API contract', async () => {
  const res = await search('search=translate&type=circuits');
  expect(res.status).toBe(200);
  expect(res.body.data[0]).toEqual({
    type: 'circuit',
    uid: expect.any(String),
    name: 'translate',
    description: 'Translates text between languages',
    username: 'alice-walker',
  });
  for (const item of res.body.data)
    expect(Object.keys(item).sort()).toEqual(['description', 'name', 'type', 'uid', 'username']);
  const users = await search('search=alice&type=users');
  expect(users.body.data).toEqual([
    {
      type: 'user',
      uid: alice.user.uid,
      username: 'alice-walker',
      name: 'Alice Walker',
      bio: 'Builds translation pipelines',
    },
  ]);
});

test('words match as prefixes, in names, descriptions and the owner username; punctuation splits words', async () => {
  expect(names((await search('search=transl&type=circuits')).body)).toEqual(
    expect.arrayContaining(['translate', 'translate-pro', 'summarise', 'translate-protected']),
  );
  expect(names((await search('search=glossar')).body)).toEqual(['translate-pro']);
  expect(names((await search('search=walker%20summ&type=circuits')).body)).toEqual(['summarise']);
  expect(names((await search('search=translate-pro&type=circuits')).body)[0]).toBe('translate-pro');
  expect((await search(`search=${encodeURIComponent("'&|!:*()<->\\")}`)).body).toEqual({
    meta: { total_count: 0, limit: 10, page: 1 },
    data: [],
  });
});

test('private circuits and private profiles are never returned nor counted; protected circuits are', async () => {
  const all = await search('search=translat&limit=100');
  const found = names(all.body);
  expect(found).not.toContain('translate-private');
  expect(found).not.toContain('secret-agent');
  expect(found).toContain('translate-protected');
  expect(all.body.meta.total_count).toBe(all.body.data.length);
  expect(found.sort()).toEqual(
    ['alice-walker', 'summarise', 'translate', 'translate-pro', 'translate-protected'].sort(),
  );
  // A public circuit of a private profile is still a public circuit.
  expect(names((await search('search=spy')).body)).toEqual(['spy-tool']);
  // A token widens nothing.
  const asOwner = await search('search=translat&limit=100', alice.token);
  expect(asOwner.body.meta.total_count).toBe(all.body.meta.total_count);
});

test('a circuit made private, or a profile made private, leaves the results at once (no stale cached page)', async () => {
  const owner = await makeUser({ username: 'wombat-keeper' });
  const { circuit } = await makeCircuit(owner, { name: 'wombat' }, null);
  expect(names((await search('search=wombat')).body)).toEqual(['wombat', 'wombat-keeper']);
  expect(names((await search('search=wombat')).body)).toEqual(['wombat', 'wombat-keeper']);
  await circuit.update({ is_private: true });
  expect(names((await search('search=wombat')).body)).toEqual(['wombat-keeper']);
  await User.update({ is_private: true }, { where: { uid: owner.user.uid } });
  expect((await search('search=wombat')).body).toEqual({ meta: { total_count: 0, limit: 10, page: 1 }, data: [] });
  await circuit.update({ is_private: false });
  expect(names((await search('search=wombat')).body)).toEqual(['wombat']);
});

test('type filters circuits or users; all mixes both ranked together with the total of both', async () => {
  const circuits = await search('search=translat&type=circuits');
  expect(circuits.body.data.every((d: any) => d.type === 'circuit')).toBe(true);
  expect(circuits.body.meta.total_count).toBe(4);
  const users = await search('search=translat&type=users');
  expect(users.body.data.every((d: any) => d.type === 'user')).toBe(true);
  expect(users.body.meta.total_count).toBe(1);
  const all = await search('search=translat');
  expect(all.body.meta.total_count).toBe(5);
  expect(new Set(all.body.data.map((d: any) => d.type))).toEqual(new Set(['circuit', 'user']));
  const exactUser = await search('search=alice-walker');
  expect(exactUser.body.data[0]).toMatchObject({ type: 'user', username: 'alice-walker' });
});

test('pagination: limit, page, total_count and the cap of 100', async () => {
  const owner = await makeUser({ username: 'bulk-owner' });
  for (let i = 0; i < 105; i++) await makeCircuit(owner, { name: `zebra-${i}` }, null);
  const first = await search('search=zebra&limit=100');
  expect(first.body.meta).toEqual({ total_count: 105, limit: 100, page: 1 });
  expect(first.body.data).toHaveLength(100);
  const capped = await search('search=zebra&limit=500');
  expect(capped.body.meta).toEqual({ total_count: 105, limit: 100, page: 1 });
  expect(capped.body.data).toHaveLength(100);
  const second = await search('search=zebra&limit=100&page=2');
  expect(second.body.meta).toEqual({ total_count: 105, limit: 100, page: 2 });
  expect(second.body.data).toHaveLength(5);
  const seen = new Set([...first.body.data, ...second.body.data].map((d: any) => d.uid));
  expect(seen.size).toBe(105);
  const beyond = await search('search=zebra&limit=100&page=5');
  expect(beyond.body).toEqual({ meta: { total_count: 105, limit: 100, page: 5 }, data: [] });
  const defaults = await search('search=zebra');
  expect(defaults.body.meta).toEqual({ total_count: 105, limit: 10, page: 1 });
});

test(`beyond ${SEARCH_MATCH_BOUND} matches total_count is the bound, pages end there, and an exact name match still ranks first`, async () => {
  const owner = await makeUser({ username: 'gnu-herder' });
  await t.app.services.sequelize.query(
    `INSERT INTO circuits (uid, owner_uid, name, description, is_private)
     SELECT gen_random_uuid(), :owner, 'gnu-' || g, 'a wildebeest herd', g % 10 = 0 FROM generate_series(1, :n) g`,
    { replacements: { owner: owner.user.uid, n: SEARCH_MATCH_BOUND + 300 } },
  );
  await makeCircuit(owner, { name: 'wildebeest', description: 'the exact one' }, null);
  const first = await search('search=wildebeest&type=circuits&limit=100');
  expect(first.body.meta).toEqual({ total_count: SEARCH_MATCH_BOUND, limit: 100, page: 1 });
  expect(first.body.data[0]).toEqual(expect.objectContaining({ name: 'wildebeest', description: 'the exact one' }));
  const last = await search(`search=wildebeest&type=circuits&limit=100&page=${SEARCH_MATCH_BOUND / 100}`);
  expect(last.body.data).toHaveLength(100);
  const beyond = await search(`search=wildebeest&type=circuits&limit=100&page=${SEARCH_MATCH_BOUND / 100 + 1}`);
  expect(beyond.body).toEqual({
    meta: { total_count: SEARCH_MATCH_BOUND, limit: 100, page: SEARCH_MATCH_BOUND / 100 + 1 },
    data: [],
  });
  // Every page comes from the same ranked candidates: no uid twice, none private.
  const uids = new Set<string>();
  for (let page = 1; page <= SEARCH_MATCH_BOUND / 100; page++) {
    for (const item of (await search(`search=wildebeest&type=circuits&limit=100&page=${page}`)).body.data)
      uids.add(item.uid);
  }
  expect(uids.size).toBe(SEARCH_MATCH_BOUND);
  const [{ n }] = await t.app.services.sequelize.query<{ n: string }>(
    'SELECT count(*) AS n FROM circuits WHERE uid IN (:uids) AND is_private',
    { replacements: { uids: [...uids] }, type: QueryTypes.SELECT },
  );
  expect(Number(n)).toBe(0);
});

test('a prefix finds words that appeared a moment ago: new circuits, updated descriptions, new and renamed users (search_lexemes)', async () => {
  const owner = await makeUser({ username: 'lexi-owner', bio: 'quagga keeper' });
  expect(names((await search('search=quag&type=users')).body)).toEqual(['lexi-owner']);
  const { circuit } = await makeCircuit(owner, { name: 'numbat-counter', description: 'counts things' }, null);
  expect(names((await search('search=numb&type=circuits')).body)).toEqual(['numbat-counter']);
  await t.rest('PUT', '/users/lexi-owner/circuits/numbat-counter', {
    token: owner.token,
    body: { description: 'counts quolls' },
  });
  expect(names((await search('search=quol&type=circuits')).body)).toEqual(['numbat-counter']);
  await User.update({ username: 'wallaby-owner' }, { where: { uid: owner.user.uid } });
  expect((await search('search=wallab&type=circuits')).body.data.map((d: any) => d.uid)).toEqual([circuit.uid]);
  // A prefix standing for many words (more than are expanded) still matches them all.
  const many = await makeUser({ username: 'prefix-many' });
  for (let i = 0; i < 20; i++) await makeCircuit(many, { name: `kiwi${String.fromCharCode(97 + i)}-x` }, null);
  expect((await search('search=kiwi&type=circuits&limit=100')).body.meta.total_count).toBe(20);
});

test('the owner username is searchable and follows a rename', async () => {
  const owner = await makeUser({ username: 'oldname-zz' });
  await makeCircuit(owner, { name: 'owned-thing' }, null);
  expect(names((await search('search=oldname&type=circuits')).body)).toEqual(['owned-thing']);
  await User.update({ username: 'newname-zz' }, { where: { uid: owner.user.uid } });
  expect((await search('search=oldname&type=circuits')).body.meta.total_count).toBe(0);
  expect((await search('search=newname-zz&type=circuits')).body.data).toEqual([
    expect.objectContaining({ name: 'owned-thing', username: 'newname-zz' }),
  ]);
});

test('bad input is 400 BadClientData with the error envelope', async () => {
  for (const query of [
    '',
    'search=',
    'search=%20%20',
    'search=a&type=boards',
    'search=a&type=ALL',
    'search=a&limit=0',
    'search=a&limit=x',
    'search=a&page=0',
    `search=${'a'.repeat(201)}`,
  ]) {
    const res = await search(query);
    expect({ query, status: res.status, code: res.body?.error?.code }).toEqual({
      query,
      status: 400,
      code: 'BadClientData',
    });
  }
  const invalidType = await search('search=a&type=boards');
  expect(invalidType.body.error.message).toBe('type must be one of all, circuits, users');
});
