import type { Circuit } from '../src/models';
import { useTestApp } from './support/app';
import { HELLO_DEFINITION, makeCircuit, makeUser, TestUser } from './support/factories';

/**
 * Every response about a deprecated circuit carries the notice and the `Deprecation`
 * header; lists of many circuits do not. The notice follows from the circuit the request names
 * (graphql/notices.ts), so every single-circuit endpoint is covered without a call of its own.
 */
const t = useTestApp();
let owner: TestUser;
let circuit: Circuit;

beforeAll(async () => {
  owner = await makeUser();
  ({ circuit } = await makeCircuit(owner, { name: 'old-one' }));
  expect((await t.rest('PUT', `/circuits/${circuit.uid}/deprecate`, { token: owner.token })).status).toBe(200);
});

const byName = () => `/users/${owner.username}/circuits/old-one`;
const about: [string, () => [string, string, unknown?]][] = [
  ['get by uid', () => ['GET', `/circuits/${circuit.uid}`]],
  ['get by name', () => ['GET', byName()]],
  ['primary version', () => ['GET', `/circuits/${circuit.uid}/primary`]],
  ['versions', () => ['GET', `/circuits/${circuit.uid}/circuit-versions`]],
  ['update', () => ['PUT', byName(), { description: 'still here' }]],
  ['deprecate again', () => ['PUT', `/circuits/${circuit.uid}/deprecate`]],
  ['star', () => ['POST', `${byName()}/stars`]],
  ['starred?', () => ['GET', `${byName()}/stars`]],
  ['unstar', () => ['DELETE', `${byName()}/stars`]],
  ['embeds', () => ['GET', `${byName()}/embeds`]],
  ['explain', () => ['GET', `${byName()}/explain`]],
  ['public runs', () => ['GET', `/circuits/${circuit.uid}/circuit-runs`]],
];

test.each(about)('%s: the response says the circuit is deprecated', async (_name, request) => {
  const [method, path, body] = request();
  const res = await t.rest(method, path, { token: owner.token, ...(body ? { body } : {}) });
  expect(res.status).toBeLessThan(300);
  expect(res.headers.get('deprecation')).toMatch(/^@\d+$/);
  if (res.body.status === 'success')
    expect(res.body.notices).toEqual([
      { code: 'deprecated', message: 'Circuit old-one is deprecated and may be removed in the future' },
    ]);
});

test('a list of circuits carries no notice', async () => {
  const res = await t.rest('GET', `/users/${owner.username}/circuits`, { token: owner.token });
  expect(res.status).toBe(200);
  expect(res.headers.get('deprecation')).toBeNull();
  expect(res.body.notices).toBeUndefined();
});

test('GraphQL puts the notice in extensions', async () => {
  const res = await t.gql(
    `query($uid: ID!) { circuit(uid: $uid) { uid isDeprecated } }`,
    { uid: circuit.uid },
    owner.token,
  );
  expect((res.data as any).circuit.isDeprecated).toBe(true);
  expect(res.extensions.notices).toEqual([{ code: 'deprecated', message: expect.stringContaining('old-one') }]);
});

test('publishing a version of a deprecated circuit says so too (GraphQL only)', async () => {
  const res = await t.gql(
    `mutation($uid: ID!, $definition: JSON!) { publishCircuitVersion(circuitUid: $uid, definition: $definition) { number isDeprecated } }`,
    { uid: circuit.uid, definition: HELLO_DEFINITION },
    owner.token,
  );
  expect((res.data as any).publishCircuitVersion.isDeprecated).toBe(true);
  expect(res.extensions.notices).toEqual([{ code: 'deprecated', message: expect.stringContaining('old-one') }]);
});

test('an error response after naming the circuit carries no notice', async () => {
  const res = await t.rest('PUT', byName(), { token: (await makeUser()).token, body: { description: 'not mine' } });
  expect(res.status).toBe(403);
  expect(res.headers.get('deprecation')).toBeNull();
});
