import { startTestApp, TestApp } from './support/app';
import { makeCircuit, makeUser } from './support/factories';
import { makeEmbeddingCircuit, publishAgain } from './support/circuit-factories';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

test('circuitPrimaryVersion, circuitVersions and the primaryVersion field', async () => {
  const owner = await makeUser();
  const { circuit, version } = await makeCircuit(owner);
  const v2 = await publishAgain(owner, circuit);
  const res = await t.gql(
    `query($uid: ID!) {
    circuitPrimaryVersion(uid: $uid)
    circuitVersions(circuitUid: $uid, limit: 1) { totalCount limit page items { number isPrimary } }
    circuit(uid: $uid) { primaryVersion { uid number querySchema } }
  }`,
    { uid: circuit.uid },
  );
  expect(res.errors).toBeUndefined();
  expect(res.data.circuitPrimaryVersion).toBe(version!.uid);
  expect(res.data.circuitVersions).toEqual({
    totalCount: 2,
    limit: 1,
    page: 1,
    items: [{ number: 2, isPrimary: false }],
  });
  expect(res.data.circuit.primaryVersion).toMatchObject({
    uid: version!.uid,
    number: 1,
    querySchema: { type: 'object' },
  });
  expect(v2.number).toBe(2);

  const bad = await t.gql(`query($uid: ID!) { circuitVersions(circuitUid: $uid, limit: 0) { totalCount } }`, {
    uid: circuit.uid,
  });
  expect(bad.code).toBe('BadClientData');
  expect((await t.gql(`{ circuitPrimaryVersion(uid: "nope") }`)).code).toBe('NotFound');
});

test('userCircuits lists private circuits only to the owner; primaryVersion is hidden where the caller may not read', async () => {
  const owner = await makeUser();
  const other = await makeUser();
  await makeCircuit(owner, { name: 'open' });
  await makeCircuit(owner, { name: 'guarded', isProtected: true });
  await makeCircuit(owner, { name: 'hidden', isPrivate: true });
  const query = `query($u: String!) { userCircuits(username: $u) { totalCount items { name primaryVersion { number } } } }`;
  const asOther = await t.gql(query, { u: owner.username }, other.token);
  expect(asOther.data.userCircuits.totalCount).toBe(2);
  expect(asOther.data.userCircuits.items).toEqual([
    { name: 'guarded', primaryVersion: null },
    { name: 'open', primaryVersion: { number: 1 } },
  ]);
  const asOwner = await t.gql(query, { u: owner.username }, owner.token);
  expect(asOwner.data.userCircuits.items.map((c: any) => c.name)).toEqual(['hidden', 'guarded', 'open']);
  expect((await t.gql(query, { u: 'no-one-here' })).code).toBe('NotFound');
});

test('updateCircuit changes only the given fields and is owner-only', async () => {
  const owner = await makeUser();
  const other = await makeUser();
  await makeCircuit(owner, { name: 'edit-me', description: 'before', licenseType: 'MIT' }, null);
  const mutation = `mutation($u: String!, $n: String!, $input: UpdateCircuitInput!) {
    updateCircuit(username: $u, name: $n, input: $input) { description isPrivate isProtected licenseType }
  }`;
  const vars = { u: owner.username, n: 'edit-me' };
  const res = await t.gql(mutation, { ...vars, input: { isProtected: true } }, owner.token);
  expect(res.data.updateCircuit).toEqual({
    description: 'before',
    isPrivate: false,
    isProtected: true,
    licenseType: 'MIT',
  });
  const cleared = await t.gql(mutation, { ...vars, input: { licenseType: null, description: 'after' } }, owner.token);
  expect(cleared.data.updateCircuit).toEqual({
    description: 'after',
    isPrivate: false,
    isProtected: true,
    licenseType: null,
  });
  expect((await t.gql(mutation, { ...vars, input: { isPrivate: null } }, owner.token)).code).toBe('BadClientData');
  expect((await t.gql(mutation, { ...vars, input: { isPrivate: 'no' } }, owner.token)).code).toBe('BadClientData');
  expect((await t.gql(mutation, { ...vars, input: { name: 'x' } }, owner.token)).code).toBe('BadClientData');
  expect((await t.gql(mutation, { ...vars, input: {} }, other.token)).code).toBe('NotAllowed');
  expect((await t.gql(mutation, { ...vars, input: {} })).code).toBe('Unauthorized');
});

test('deprecateCircuit: extensions carry the notice and the response the Deprecation header', async () => {
  const owner = await makeUser();
  const { circuit } = await makeCircuit(owner);
  const res = await t.gql(
    `mutation($uid: ID!) { deprecateCircuit(uid: $uid) { isDeprecated } }`,
    { uid: circuit.uid },
    owner.token,
  );
  expect(res.data.deprecateCircuit.isDeprecated).toBe(true);
  expect(res.extensions.notices).toEqual([{ code: 'deprecated', message: expect.any(String) }]);

  const raw = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: `query($uid: ID!) { circuitVersions(circuitUid: $uid) { items { isDeprecated } } }`,
      variables: { uid: circuit.uid },
    }),
  });
  expect(raw.headers.get('deprecation')).toMatch(/^@\d+$/);
  const body = await raw.json();
  expect(body.data.circuitVersions.items).toEqual([{ isDeprecated: true }]);
  expect(body.extensions.notices[0].code).toBe('deprecated');
  const version = await t.gql(
    `mutation($uid: ID!) { publishCircuitVersion(circuitUid: $uid, definition: { query_schema: { type: "object" }, steps: [{ id: "a", kind: "template", template: "x" }] }) { isDeprecated } }`,
    { uid: circuit.uid },
    owner.token,
  );
  expect(version.errors).toBeUndefined();
  expect(version.data.publishCircuitVersion.isDeprecated).toBe(true);
});

test('starCircuit, unstarCircuit, circuitStarred and starredCircuits', async () => {
  const owner = await makeUser();
  const fan = await makeUser();
  const { circuit: a } = await makeCircuit(owner, { name: 'aa' }, null);
  const { circuit: b } = await makeCircuit(owner, { name: 'bb' }, null);
  const starM = `mutation($u: String!, $n: String!) { starCircuit(username: $u, name: $n) { starred starCount } }`;
  expect((await t.gql(starM, { u: owner.username, n: a.name }, fan.token)).data.starCircuit).toEqual({
    starred: true,
    starCount: 1,
  });
  expect((await t.gql(starM, { u: owner.username, n: b.name }, fan.token)).data.starCircuit).toEqual({
    starred: true,
    starCount: 1,
  });
  expect((await t.gql(starM, { u: owner.username, n: b.name })).code).toBe('Unauthorized');

  const list = await t.gql(`{ starredCircuits { totalCount limit items { name starCount } } }`, {}, fan.token);
  expect(list.data.starredCircuits).toEqual({
    totalCount: 2,
    limit: 50,
    items: [
      { name: 'bb', starCount: 1 },
      { name: 'aa', starCount: 1 },
    ],
  });

  const unstar = await t.gql(
    `mutation($u: String!, $n: String!) { unstarCircuit(username: $u, name: $n) { starred starCount } }`,
    { u: owner.username, n: a.name },
    fan.token,
  );
  expect(unstar.data.unstarCircuit).toEqual({ starred: false, starCount: 0 });
  const starred = await t.gql(
    `query($u: String!) { a: circuitStarred(username: $u, name: "aa") b: circuitStarred(username: $u, name: "bb") }`,
    { u: owner.username },
    fan.token,
  );
  expect(starred.data).toEqual({ a: false, b: true });
  expect((await t.gql(`{ starredCircuits { totalCount } }`)).code).toBe('Unauthorized');
});

test('circuitPing, circuitEmbeds and explainCircuit', async () => {
  const owner = await makeUser();
  const { circuit: target } = await makeCircuit(owner, { name: 'core' });
  const user = await makeEmbeddingCircuit(owner, target, { name: 'wrapper' });
  const res = await t.gql(
    `query($u: String!) {
    yes: circuitPing(username: $u, name: "core")
    no: circuitPing(username: $u, name: "ghost")
    circuitEmbeds(username: $u, name: "core") { totalCount items { uid name } }
    explainCircuit(username: $u, name: "wrapper") { versionUid circuit { name } inputs { name type required } steps { id kind description } text }
  }`,
    { u: owner.username },
  );
  expect(res.errors).toBeUndefined();
  expect(res.data.yes).toBe(true);
  expect(res.data.no).toBe(false);
  expect(res.data.circuitEmbeds).toEqual({ totalCount: 1, items: [{ uid: user.uid, name: 'wrapper' }] });
  const explained = res.data.explainCircuit;
  expect(explained.versionUid).toBe(user.primary_version_uid);
  expect(explained.inputs).toEqual([{ name: 'name', type: 'string', required: false }]);
  expect(explained.steps).toEqual([
    {
      id: 'inner',
      kind: 'circuit',
      description: `Runs the circuit ${owner.username}/core (its primary version) and takes its result, using input name.`,
    },
  ]);
  expect(explained.text.split('\n')).toEqual([
    'Takes input: name (string, optional).',
    `1. inner (circuit): ${explained.steps[0].description}`,
    'Returns the output of step inner.',
  ]);
  expect((await t.gql(`{ circuitPing(username: "x", name: "y") }`, {}, 'cst_bad')).code).toBe('Unauthorized');
});

test('createCircuitMetric validates JSONata, belongs to the caller, and can be attached to a circuit', async () => {
  const owner = await makeUser();
  const other = await makeUser();
  const create = `mutation($input: CreateCircuitMetricInput!) { createCircuitMetric(input: $input) { uid name metrics { name expression } } }`;
  const ok = await t.gql(
    create,
    { input: { name: 'lengths', metrics: [{ name: 'chars', expression: '$length(output)' }] } },
    owner.token,
  );
  expect(ok.errors).toBeUndefined();
  expect(ok.data.createCircuitMetric).toMatchObject({
    name: 'lengths',
    metrics: [{ name: 'chars', expression: '$length(output)' }],
  });

  const bad = await t.gql(
    create,
    { input: { name: 'broken', metrics: [{ name: 'x', expression: '$length(' }] } },
    owner.token,
  );
  expect(bad.code).toBe('BadClientData');
  expect(bad.errors![0].message).toContain('metrics[0].expression (x)');
  expect((await t.gql(create, { input: { name: 'none', metrics: [] } }, owner.token)).code).toBe('BadClientData');
  expect(
    (
      await t.gql(
        create,
        {
          input: {
            name: 'dup',
            metrics: [
              { name: 'a', expression: '1' },
              { name: 'a', expression: '2' },
            ],
          },
        },
        owner.token,
      )
    ).code,
  ).toBe('BadClientData');
  expect((await t.gql(create, { input: { name: 'anon', metrics: [{ name: 'a', expression: '1' }] } })).code).toBe(
    'Unauthorized',
  );

  const mine = await t.gql(`{ circuitMetrics { uid } }`, {}, owner.token);
  expect(mine.data.circuitMetrics).toEqual([{ uid: ok.data.createCircuitMetric.uid }]);
  expect((await t.gql(`{ circuitMetrics { uid } }`, {}, other.token)).data.circuitMetrics).toEqual([]);

  const metricUid = ok.data.createCircuitMetric.uid;
  const attached = await t.rest('POST', '/circuits', {
    token: owner.token,
    body: { name: 'measured', user_circuit_metric_uid: metricUid },
  });
  expect(attached.body.payload.user_circuit_metric_uid).toBe(metricUid);
  const stolen = await t.rest('POST', '/circuits', {
    token: other.token,
    body: { name: 'thief', user_circuit_metric_uid: metricUid },
  });
  expect(stolen.status).toBe(400);
});

test('a circuit lists its adaptors; the default query adaptor is the one REST posts queries to', async () => {
  const owner = await makeUser();
  const created = await t.gql(
    'mutation($i: CreateCircuitInput!) { createCircuit(input: $i) { uid adaptorUid adaptors { uid circuitUid kind } } }',
    { i: { name: 'with-adaptor' } },
    owner.token,
  );
  const circuit = created.data.createCircuit;
  expect(circuit.adaptors).toEqual([{ uid: circuit.adaptorUid, circuitUid: circuit.uid, kind: 'query' }]);
});
