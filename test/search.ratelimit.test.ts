import { QueryTypes } from 'sequelize';
import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';

let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  a = await startTestApp({ searchRateLimitPerMinute: 3 });
  // A second API process on the same database, as in a scaled-out deployment.
  b = await startTestApp({ searchRateLimitPerMinute: 3 }, { databaseUrl: a.databaseUrl });
});
afterAll(async () => {
  await b.close();
  await a.close();
});

const SEARCH = 'query($s: String!) { search(search: $s) { totalCount } }';

test('the 4th search in a minute from one client is 429 RateLimited with Retry-After and RateLimit-* headers', async () => {
  expect(a.app.services.searchRateLimiter.backend).toBe('postgres');
  for (let i = 1; i <= 3; i++) {
    const ok = await a.rest('GET', '/search?search=anything');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('ratelimit-limit')).toBe('3');
    expect(ok.headers.get('ratelimit-remaining')).toBe(String(3 - i));
    expect(Number(ok.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect(ok.headers.get('ratelimit-policy')).toBe('"search";q=3;w=60');
    expect(ok.headers.get('ratelimit')).toBe(`"search";r=${3 - i};t=${ok.headers.get('ratelimit-reset')}`);
  }
  const refused = await a.rest('GET', '/search?search=anything');
  expect(refused.status).toBe(429);
  expect(refused.body.error).toEqual({ code: 'RateLimited', message: expect.any(String) });
  const retryAfter = Number(refused.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(refused.headers.get('ratelimit-remaining')).toBe('0');
  expect(refused.headers.get('ratelimit-limit')).toBe('3');
  expect(refused.headers.get('ratelimit')).toMatch(/^"search";r=0;t=\d+$/);
  // A missing search is refused by the REST bridge before any count.
  expect((await a.rest('GET', '/search?search=')).status).toBe(400);
});

test('a token holder is counted by user, apart from the IP, and /graphql shares the same count', async () => {
  const user = await makeUser();
  expect((await a.rest('GET', '/search?search=x', { token: user.token })).status).toBe(200);
  expect((await a.rest('GET', '/search?search=x', { token: user.token })).status).toBe(200);
  const third = await a.gql(SEARCH, { s: 'x' }, user.token);
  expect(third.errors).toBeUndefined();
  const fourth = await fetch(`${a.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
    body: JSON.stringify({ query: SEARCH, variables: { s: 'x' } }),
  });
  const body = (await fourth.json()) as { errors: { extensions: { code: string } }[] };
  expect(body.errors[0].extensions.code).toBe('RateLimited');
  expect(Number(fourth.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
});

test('two API processes on one database share each client count', async () => {
  const user = await makeUser();
  expect((await a.rest('GET', '/search?search=x', { token: user.token })).status).toBe(200);
  expect((await b.rest('GET', '/search?search=x', { token: user.token })).status).toBe(200);
  expect((await a.rest('GET', '/search?search=x', { token: user.token })).headers.get('ratelimit-remaining')).toBe('0');
  const onB = await b.rest('GET', '/search?search=x', { token: user.token });
  expect(onB.status).toBe(429);
  expect(onB.body.error.code).toBe('RateLimited');
  expect((await a.rest('GET', '/search?search=x', { token: user.token })).status).toBe(429);
  const [row] = await a.app.services.sequelize.query<{ points: number }>(
    'SELECT points FROM rate_limits WHERE key = :key',
    { type: QueryTypes.SELECT, replacements: { key: `search:user:${user.user.uid}` } },
  );
  expect(row.points).toBeGreaterThanOrEqual(4);
});

const redisUrl = process.env.REDIS_URL;
(redisUrl ? describe : describe.skip)('with REDIS_URL', () => {
  test('two processes share the count in Redis instead of PostgreSQL', async () => {
    const r1 = await startTestApp({ searchRateLimitPerMinute: 2, redisUrl }, { databaseUrl: a.databaseUrl });
    const r2 = await startTestApp({ searchRateLimitPerMinute: 2, redisUrl }, { databaseUrl: a.databaseUrl });
    try {
      expect(r1.app.services.searchRateLimiter.backend).toBe('redis');
      const user = await makeUser();
      expect((await r1.rest('GET', '/search?search=x', { token: user.token })).status).toBe(200);
      expect((await r2.rest('GET', '/search?search=x', { token: user.token })).status).toBe(200);
      expect((await r1.rest('GET', '/search?search=x', { token: user.token })).status).toBe(429);
      const rows = await a.app.services.sequelize.query('SELECT 1 FROM rate_limits WHERE key = :key', {
        type: QueryTypes.SELECT,
        replacements: { key: `search:user:${user.user.uid}` },
      });
      expect(rows).toHaveLength(0);
    } finally {
      await r2.close();
      await r1.close();
    }
  });
});
if (!redisUrl)
  console.log(
    'search.ratelimit: the Redis case is skipped because REDIS_URL is unset (no Redis answered at 127.0.0.1:6379, or TEST_REDIS=off)',
  );
