import { startTestApp, TestApp } from './support/app';
import { makeUser, type TestUser } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget, submitRun } from './support/run-factories';
import { follow, type Followed } from './support/follow';
import { revokeApiToken } from '../src/commands/revoke-api-token';
import { ApiToken } from '../src/models';
import { CircuitRun } from '../src/models/CircuitRun';
import { createApiToken } from '../src/commands/create-api-token';

jest.setTimeout(120_000);

/**
 * Issue #24 (revocation): a stream relies on the authority it was opened with. A token revoked, or a
 * run made private, ends the REST SSE stream and the graphql-sse subscription that relied on it within
 * a second — they never go on to deliver the run. Streams that still have their authority stay open.
 */
let t: TestApp;
let target: Awaited<ReturnType<typeof startHoldingTarget>>;
let owner: TestUser;
let adaptorUid: string;

beforeAll(async () => {
  t = await startTestApp();
  target = await startHoldingTarget();
  owner = await makeUser();
  ({ adaptorUid } = await makeRunnableCircuit(owner, target.holdDefinition()));
});
afterAll(async () => {
  await target?.close();
  await t?.close();
});

/** A run waiting in its http step (so its streams stay open). */
async function waitingRun(isPublic: boolean): Promise<string> {
  const submitted = await submitRun(t, owner.token, adaptorUid, { input: {}, is_public: isPublic });
  expect(submitted.status).toBe(200);
  return submitted.body.payload.uid as string;
}

const SUBSCRIPTION = 'subscription ($uid: ID!) { circuitRunUpdated(uid: $uid) { uid state } }';

async function openBoth(uid: string, token?: string): Promise<{ rest: Followed; gql: Followed }> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const rest = await follow(`${t.url}/api/v1/circuit-runs/${uid}/events`, { headers });
  const gql = await follow(`${t.url}/graphql/stream`, {
    method: 'POST',
    headers,
    body: { query: SUBSCRIPTION, variables: { uid } },
  });
  expect(rest.status).toBe(200);
  expect(gql.status).toBe(200);
  // Both have delivered the run as it is now: they are open and following.
  await rest.until('event: state');
  await gql.until('event: next');
  return { rest, gql };
}

test('a token revoked while its REST SSE stream and graphql-sse subscription are open ends both within 1 s; another token of the same user keeps its streams', async () => {
  const uid = await waitingRun(false);
  const { token: revoked } = await createApiToken(owner.user, 'to revoke');
  const doomed = await openBoth(uid, revoked);
  const kept = await openBoth(uid, owner.token);

  const row = await ApiToken.findOne({ where: { user_uid: owner.user.uid, label: 'to revoke' } });
  const revokedAt = Date.now();
  expect(await revokeApiToken(owner.user, row!.uid)).toBe(true);

  const [restEnd, gqlEnd] = await Promise.all([doomed.rest.ended, doomed.gql.ended]);
  expect(restEnd - revokedAt).toBeLessThan(1_000);
  expect(gqlEnd - revokedAt).toBeLessThan(1_000);
  // A new request with the token is 401 at once, as before.
  expect((await t.rest('GET', `/circuit-runs/${uid}`, { token: revoked })).status).toBe(401);

  // The streams of the user's other token were re-checked too, and kept: they still follow the run.
  target.release();
  await kept.rest.until('"COMPLETED"');
  await kept.gql.until('COMPLETED');
  expect(doomed.rest.text()).not.toContain('COMPLETED');
  expect(doomed.gql.text()).not.toContain('COMPLETED');
  await Promise.all([kept.rest.ended, kept.gql.ended]);
});

test("a public run made private ends the anonymous REST SSE stream and graphql-sse subscription within 1 s; the owner's stay open", async () => {
  const uid = await waitingRun(true);
  await target.untilHeld(1);
  const anonymous = await openBoth(uid);
  const owners = await openBoth(uid, owner.token);

  const madePrivateAt = Date.now();
  await CircuitRun.update({ is_public: false }, { where: { uid } });

  const [restEnd, gqlEnd] = await Promise.all([anonymous.rest.ended, anonymous.gql.ended]);
  expect(restEnd - madePrivateAt).toBeLessThan(1_000);
  expect(gqlEnd - madePrivateAt).toBeLessThan(1_000);
  // Anonymous readers now get what a new request gets: the run is private (sign in to read it).
  expect((await t.rest('GET', `/circuit-runs/${uid}`)).status).toBe(401);

  target.release();
  await owners.rest.until('"COMPLETED"');
  await owners.gql.until('COMPLETED');
  expect(anonymous.rest.text()).not.toContain('COMPLETED');
  expect(anonymous.gql.text()).not.toContain('COMPLETED');
});
