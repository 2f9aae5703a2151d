import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit } from './support/run-factories';
import { createApiToken } from '../src/commands/create-api-token';

// Run creation is limited per token (RUN_RATE_LIMIT_PER_MINUTE) and every query answers
// the IETF RateLimit-* headers; beyond the limit, 429 RateLimited with Retry-After.

let t: TestApp;
let owner: TestUser;
let adaptorUid: string;
const LIMIT = 3;

beforeAll(async () => {
  t = await startTestApp({ runRateLimitPerMinute: LIMIT });
  owner = await makeUser();
  ({ adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION));
});
afterAll(async () => {
  await t.close();
});

const query = (token: string) =>
  t.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, { token, body: { input: { name: 'Ada' } } });

test('every query answers RateLimit-Policy and RateLimit, and the legacy RateLimit-Limit/-Remaining/-Reset; past the limit 429 with Retry-After, per token', async () => {
  const { token } = await createApiToken(owner.user, 'limited');
  for (let i = 1; i <= LIMIT; i++) {
    const res = await query(token);
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-limit')).toBe(String(LIMIT));
    expect(res.headers.get('ratelimit-remaining')).toBe(String(LIMIT - i));
    const reset = Number(res.headers.get('ratelimit-reset'));
    expect(reset).toBeGreaterThanOrEqual(0);
    expect(reset).toBeLessThanOrEqual(60);
    expect(res.headers.get('ratelimit-policy')).toBe(`"runs";q=${LIMIT};w=60`);
    expect(res.headers.get('ratelimit')).toBe(`"runs";r=${LIMIT - i};t=${reset}`);
  }
  const refused = await query(token);
  expect(refused.status).toBe(429);
  expect(refused.body.error.code).toBe('RateLimited');
  expect(refused.headers.get('ratelimit-remaining')).toBe('0');
  expect(refused.headers.get('ratelimit')).toMatch(/^"runs";r=0;t=\d+$/);
  const retryAfter = Number(refused.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);

  // GraphQL counts against the same token, with the same headers.
  const gql = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'mutation($a: ID!) { queryCircuitAdaptor(adaptorUid: $a, input: {name: "Ada"}) { uid } }',
      variables: { a: adaptorUid },
    }),
  });
  expect(gql.headers.get('ratelimit-limit')).toBe(String(LIMIT));
  expect(gql.headers.get('retry-after')).not.toBeNull();
  expect(((await gql.json()) as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBe(
    'RateLimited',
  );

  // Another token of the same user has its own window.
  const other = await query(owner.token);
  expect(other.status).toBe(200);
  expect(other.headers.get('ratelimit-remaining')).toBe(String(LIMIT - 1));
});

test('a replay is a new run: it counts towards the same limit and is refused past it', async () => {
  const { token } = await createApiToken(owner.user, 'replays');
  const first = await query(token);
  const uid = first.body.payload.uid as string;
  for (
    let i = 0;
    i < 50 &&
    !['COMPLETED', 'EXCEPTION'].includes((await t.rest('GET', `/circuit-runs/${uid}`, { token })).body.payload.state);
    i++
  )
    await new Promise((resolve) => setTimeout(resolve, 50));
  const statuses: number[] = [];
  for (let i = 0; i < LIMIT; i++)
    statuses.push((await t.rest('POST', `/circuit-runs/${uid}/replay`, { token, body: {} })).status);
  expect(statuses).toEqual([200, 200, 429]);
});

test('RUN_RATE_LIMIT_PER_MINUTE=0 turns the limit (and its headers) off', async () => {
  const off = await startTestApp({ runRateLimitPerMinute: 0 }, { databaseUrl: t.databaseUrl });
  try {
    const { token } = await createApiToken(owner.user, 'unlimited');
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await off.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, {
        token,
        body: { input: { name: 'Ada' } },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBeNull();
    }
  } finally {
    await off.close();
  }
});
