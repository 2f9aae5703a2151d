import { useTestApp } from './support/app';
import { makeUser, HELLO_DEFINITION } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';

const t = useTestApp();

test('tags and metadata round-trip on the run (owner only) and filter GET /users/circuit-runs, a URL-encoded metadata key included; GraphQL viewer.runs agrees', async () => {
  const owner = await makeUser();
  const caller = await makeUser();
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const oddKey = 'customer id/é&=x';
  const tagged = await submitRun(t, caller.token, hello.adaptorUid, {
    input: { name: 'a' },
    is_public: false,
    tags: ['exp:42', 'nightly'],
    metadata: { [oddKey]: 'c-1', team: 'blue' },
  });
  expect(tagged.status).toBe(200);
  const other = await submitRun(t, caller.token, hello.adaptorUid, {
    input: { name: 'b' },
    tags: ['nightly'],
    metadata: { team: 'red' },
  });
  const plain = await submitRun(t, caller.token, hello.adaptorUid, { input: { name: 'c' } });
  const run = await waitForRun(t, tagged.body.payload.uid, caller.token);
  await waitForRun(t, other.body.payload.uid, caller.token);
  const plainRun = await waitForRun(t, plain.body.payload.uid, caller.token);
  expect(run).toMatchObject({ tags: ['exp:42', 'nightly'], metadata: { [oddKey]: 'c-1', team: 'blue' } });
  expect(plainRun).not.toHaveProperty('tags');
  expect(plainRun).not.toHaveProperty('metadata');

  const list = async (query: string) => {
    const res = await t.rest('GET', `/users/circuit-runs?${query}`, { token: caller.token });
    expect(res.status).toBe(200);
    return res.body.data.map((r: any) => r.uid);
  };
  expect(await list('tag=nightly')).toEqual([other.body.payload.uid, tagged.body.payload.uid]);
  expect(await list('tag=exp%3A42')).toEqual([tagged.body.payload.uid]);
  expect(await list(`metadata.${encodeURIComponent(oddKey)}=c-1`)).toEqual([tagged.body.payload.uid]);
  expect(await list('metadata.team=red&tag=nightly')).toEqual([other.body.payload.uid]);
  expect(await list('metadata.team=green')).toEqual([]);
  expect(await list('tag=absent')).toEqual([]);
  const created = new Date(run.created_at).getTime();
  expect(
    await list(
      `created_after=${new Date(created - 1).toISOString()}&created_before=${new Date(created + 1).toISOString()}`,
    ),
  ).toEqual([tagged.body.payload.uid]);
  expect(await list(`created_before=${new Date(created).toISOString()}`)).toEqual([]);
  const listed = (await t.rest('GET', '/users/circuit-runs?tag=exp:42', { token: caller.token })).body.data[0];
  expect(listed).toMatchObject({ tags: ['exp:42', 'nightly'], metadata: { team: 'blue' } });

  const gql = await t.gql(
    'query($m: JSONObject) { viewer { runs(tag: "nightly", metadata: $m) { totalCount items { uid tags metadata } } } }',
    { m: { [oddKey]: 'c-1' } },
    caller.token,
  );
  expect(gql.data.viewer.runs).toEqual({
    totalCount: 1,
    items: [{ uid: tagged.body.payload.uid, tags: ['exp:42', 'nightly'], metadata: { [oddKey]: 'c-1', team: 'blue' } }],
  });

  // Only the owner sees them, even on a public run.
  const pub = await submitRun(t, owner.token, hello.adaptorUid, {
    input: { name: 'p' },
    is_public: true,
    tags: ['secret-tag'],
    metadata: { k: 'v' },
  });
  await waitForRun(t, pub.body.payload.uid, owner.token);
  const seen = await t.rest('GET', `/circuit-runs/${pub.body.payload.uid}`, { token: caller.token });
  expect(seen.status).toBe(200);
  expect(seen.body.payload).not.toHaveProperty('tags');
  expect(seen.body.payload).not.toHaveProperty('metadata');
  expect((await t.rest('GET', `/circuit-runs/${pub.body.payload.uid}`)).body.payload).not.toHaveProperty('tags');
  expect(
    (await t.rest('GET', `/circuit-runs/${pub.body.payload.uid}`, { token: owner.token })).body.payload.tags,
  ).toEqual(['secret-tag']);
  // Nobody else's runs in the caller's filtered list.
  expect(await list('tag=secret-tag')).toEqual([]);
});

test('the bounds answer 400 naming the field: 11 tags, a bad tag, metadata over 4 KiB, a non-string value; filters too', async () => {
  const owner = await makeUser();
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const refused = async (body: Record<string, unknown>, field: string) => {
    const res = await submitRun(t, owner.token, hello.adaptorUid, { input: { name: 'x' }, ...body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BadClientData');
    expect(res.body.error.message).toMatch(new RegExp(`^${field}`));
  };
  await submitRun(t, owner.token, hello.adaptorUid, {
    input: { name: 'x' },
    tags: Array.from({ length: 10 }, (_, i) => `t${i}`),
  }).then((res) => expect(res.status).toBe(200));
  await refused({ tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }, 'tags');
  await refused({ tags: ['Upper'] }, 'tags');
  await refused({ tags: ['x'.repeat(65)] }, 'tags');
  await refused({ tags: 'one' }, 'tags');
  const atLimit = { k: 'v'.repeat(4096 - JSON.stringify({ k: '' }).length) };
  expect((await submitRun(t, owner.token, hello.adaptorUid, { input: { name: 'x' }, metadata: atLimit })).status).toBe(
    200,
  );
  await refused({ metadata: { k: 'v'.repeat(4096) } }, 'metadata');
  await refused({ metadata: { k: 1 } }, 'metadata');
  await refused({ metadata: ['a'] }, 'metadata');

  const gql = await t.gql(
    'mutation($a: ID!) { queryCircuitAdaptor(adaptorUid: $a, input: {name: "x"}, tags: ["a","b","c","d","e","f","g","h","i","j","k"]) { uid } }',
    { a: hello.adaptorUid },
    owner.token,
  );
  expect(gql.code).toBe('BadClientData');
  const badFilter = await t.rest('GET', '/users/circuit-runs?tag=NOT_A_TAG', { token: owner.token });
  expect(badFilter.status).toBe(400);
  expect(badFilter.body.error.message).toMatch(/^tag/);
  const badDate = await t.rest('GET', '/users/circuit-runs?created_after=yesterday', { token: owner.token });
  expect(badDate.status).toBe(400);
  expect(badDate.body.error.message).toMatch(/^created_after/);
  const twice = await t.rest('GET', '/users/circuit-runs?metadata.a=1&metadata.a=2', { token: owner.token });
  expect(twice.status).toBe(400);
  expect(twice.body.error.message).toMatch(/metadata\.a/);
});

test('an Idempotency-Key replays a query with the same tags and metadata, and refuses one with others (422)', async () => {
  const owner = await makeUser();
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const body = { input: { name: 'x' }, tags: ['a'], metadata: { k: 'v' } };
  const first = await submitRun(t, owner.token, hello.adaptorUid, body, { 'Idempotency-Key': 'labels-1' });
  const again = await submitRun(t, owner.token, hello.adaptorUid, body, { 'Idempotency-Key': 'labels-1' });
  expect(again.body.payload.uid).toBe(first.body.payload.uid);
  const other = await submitRun(
    t,
    owner.token,
    hello.adaptorUid,
    { ...body, tags: ['b'] },
    { 'Idempotency-Key': 'labels-1' },
  );
  expect(other.status).toBe(422);
});

test('the tag and metadata filters use the GIN indexes', async () => {
  const sequelize = t.app.services.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query('SET LOCAL enable_seqscan = off', { transaction });
    const [tagPlan] = await sequelize.query(`EXPLAIN SELECT uid FROM circuit_runs WHERE tags @> ARRAY['x']::text[]`, {
      transaction,
    });
    expect(JSON.stringify(tagPlan)).toMatch(/circuit_runs_tags/);
    const [metaPlan] = await sequelize.query(
      `EXPLAIN SELECT uid FROM circuit_runs WHERE metadata @> '{"a":"b"}'::jsonb`,
      { transaction },
    );
    expect(JSON.stringify(metaPlan)).toMatch(/circuit_runs_metadata/);
  });
});
