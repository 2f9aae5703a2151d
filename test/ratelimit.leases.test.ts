import crypto from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createSequelize } from '../src/db/sequelize';
import { createRateLimiter, RATE_LIMIT_TABLE, type RateLimiter } from '../src/ratelimit/rate-limiter';
import { createTestDatabase } from './support/database';

/**
 * The rate limiter's leases on the PostgreSQL store: a process takes points a few at a time, so a
 * busy client costs few store round trips, and still nothing is allowed that the store did not grant.
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sequelize: Sequelize;
const limiters: RateLimiter[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  sequelize = createSequelize(database.url, 4);
});
afterAll(async () => {
  await Promise.all(limiters.map((l) => l.close()));
  await sequelize.close();
  await database.drop();
});

/** A limiter as one API process holds it; several with one prefix share a count, as processes do. */
function processLimiter(keyPrefix: string, points: number, durationSeconds = 60): RateLimiter {
  const limiter = createRateLimiter({ points, durationSeconds, keyPrefix, sequelize });
  limiters.push(limiter);
  return limiter;
}

const prefix = () => `t${crypto.randomBytes(4).toString('hex')}`;

async function storedPoints(keyPrefix: string, key: string): Promise<number> {
  const rows = await sequelize.query<{ points: number }>(`SELECT points FROM ${RATE_LIMIT_TABLE} WHERE key = :key`, {
    type: QueryTypes.SELECT,
    replacements: { key: `${keyPrefix}:${key}` },
  });
  return rows.length ? Number(rows[0].points) : 0;
}

test('uses the PostgreSQL store', () => {
  expect(processLimiter(prefix(), 10).backend).toBe('postgres');
});

test('near the limit leases are single points: two processes together allow exactly the limit', async () => {
  const p = prefix();
  const [a, b] = [processLimiter(p, 10), processLimiter(p, 10)];
  let allowed = 0;
  for (let i = 0; i < 30; i++) if ((await (i % 2 ? a : b).consume('k')).allowed) allowed++;
  expect(allowed).toBe(10);
});

test('far from the limit a busy key costs one store round trip per lease, not per request', async () => {
  const p = prefix();
  const limiter = processLimiter(p, 6_400);
  for (let i = 0; i < 100; i++) expect((await limiter.consume('busy')).allowed).toBe(true);
  // 1 point, then leases of min(remaining / 64, 50) points: 1 + 50 + 50 points taken in 3 round trips.
  expect(await storedPoints(p, 'busy')).toBe(101);
});

test('one process uses every point it leased: sequential requests get exactly the limit', async () => {
  const p = prefix();
  const limiter = processLimiter(p, 300);
  let allowed = 0;
  for (let i = 0; i < 400; i++) if ((await limiter.consume('k')).allowed) allowed++;
  expect(allowed).toBe(300);
});

test('concurrent requests from several processes are never allowed beyond what the store granted', async () => {
  const p = prefix();
  const processes = [processLimiter(p, 200), processLimiter(p, 200), processLimiter(p, 200)];
  const decisions = await Promise.all(Array.from({ length: 600 }, (_, i) => processes[i % 3].consume('k')));
  const allowed = decisions.filter((d) => d.allowed).length;
  expect(allowed).toBeLessThanOrEqual(200);
  expect(allowed).toBeGreaterThan(150); // leases held by the other processes strand only a few points
  for (const d of decisions) {
    expect(d.limit).toBe(200);
    expect(d.remaining).toBeGreaterThanOrEqual(0);
    if (!d.allowed) expect(d.resetMs).toBeGreaterThan(0);
  }
});

test('a refused key is allowed again when its window ends', async () => {
  const p = prefix();
  const limiter = processLimiter(p, 2, 1);
  expect((await limiter.consume('k')).allowed).toBe(true);
  expect((await limiter.consume('k')).allowed).toBe(true);
  const refused = await limiter.consume('k');
  expect(refused.allowed).toBe(false);
  expect(refused.resetMs).toBeLessThanOrEqual(1_000);
  await new Promise((resolve) => setTimeout(resolve, refused.resetMs + 150));
  expect((await limiter.consume('k')).allowed).toBe(true);
});

test('keys are counted apart', async () => {
  const p = prefix();
  const limiter = processLimiter(p, 1);
  expect((await limiter.consume('a')).allowed).toBe(true);
  expect((await limiter.consume('a')).allowed).toBe(false);
  expect((await limiter.consume('b')).allowed).toBe(true);
});
