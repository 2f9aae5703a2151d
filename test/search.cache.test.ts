import { Client } from 'pg';
import { SearchCache, SEARCH_CHANGED_CHANNEL } from '../src/graphql/search/search.cache';
import { startTestApp, TestApp } from './support/app';
import { makeCircuit, makeUser } from './support/factories';

/** A compute function that counts its calls and answers `value`. */
function counter(value = 'page') {
  const fn = Object.assign(
    () => {
      fn.calls++;
      return Promise.resolve(value);
    },
    { calls: 0 },
  );
  return fn;
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('SearchCache', () => {
  test('caches nothing until a listener makes it live', async () => {
    const cache = new SearchCache<string>();
    const compute = counter();
    await cache.get('k', compute);
    await cache.get('k', compute);
    expect(compute.calls).toBe(2);
    cache.setLive(true);
    await cache.get('k', compute);
    await cache.get('k', compute);
    expect(compute.calls).toBe(3);
  });

  test('concurrent identical misses share one computation', async () => {
    const cache = new SearchCache<string>();
    cache.setLive(true);
    const compute = counter();
    const pages = await Promise.all([cache.get('k', compute), cache.get('k', compute), cache.get('k', compute)]);
    expect(pages).toEqual(['page', 'page', 'page']);
    expect(compute.calls).toBe(1);
  });

  test('invalidate drops pages, including one still being computed', async () => {
    const cache = new SearchCache<string>();
    cache.setLive(true);
    let finish!: (value: string) => void;
    const slow = cache.get(
      'k',
      () =>
        new Promise((resolve) => {
          finish = resolve;
        }),
    );
    cache.invalidate();
    finish('old snapshot');
    await slow;
    const compute = counter('fresh');
    expect(await cache.get('k', compute)).toBe('fresh');
    expect(compute.calls).toBe(1);
  });

  test('a failed computation is not kept', async () => {
    const cache = new SearchCache<string>();
    cache.setLive(true);
    await expect(cache.get('k', () => Promise.reject(new Error('db down')))).rejects.toThrow('db down');
    expect(await cache.get('k', counter('ok'))).toBe('ok');
  });

  test('is bounded: the least recently used page goes first', async () => {
    const cache = new SearchCache<string>(2);
    cache.setLive(true);
    const a = counter('a');
    const b = counter('b');
    const c = counter('c');
    await cache.get('a', a);
    await cache.get('b', b);
    await cache.get('a', a); // a is now the most recently used
    await cache.get('c', c); // evicts b
    await cache.get('a', a);
    await cache.get('b', b);
    expect([a.calls, b.calls, c.calls]).toEqual([1, 2, 1]);
  });
});

describe('invalidation through LISTEN search_changed (real PostgreSQL)', () => {
  let t: TestApp;
  let admin: Client;
  beforeAll(async () => {
    t = await startTestApp({ searchRateLimitPerMinute: 100_000 });
    admin = new Client({ connectionString: t.databaseUrl });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.end();
    await t.close();
  });

  const cache = () => t.app.services.searchCache as SearchCache<string>;
  /** Whether the cache serves `key` without computing (then it is live and holds the page). */
  async function servesCached(key: string): Promise<boolean> {
    const compute = counter();
    await cache().get(key, compute);
    await cache().get(key, compute);
    return compute.calls === 1;
  }

  test('a NOTIFY from another connection clears the cached pages', async () => {
    const compute = counter();
    await cache().get('notified', compute);
    await cache().get('notified', compute);
    expect(compute.calls).toBe(1);
    await admin.query('SELECT pg_notify($1, $2)', [SEARCH_CHANGED_CHANNEL, '']);
    await until(async () => {
      await cache().get('notified', compute);
      return compute.calls === 2;
    });
  });

  test('a circuit made private by SQL outside this process leaves the results as soon as the commit is heard', async () => {
    const owner = await makeUser();
    const { circuit } = await makeCircuit(owner, { name: 'okapi-cache' }, null);
    const names = async () =>
      ((await t.rest('GET', '/search?search=okapi&type=circuits')).body.data as { name: string }[]).map((r) => r.name);
    expect(await names()).toEqual(['okapi-cache']);
    expect(await names()).toEqual(['okapi-cache']); // served from the cache now
    await admin.query('UPDATE circuits SET is_private = true WHERE uid = $1', [circuit.uid]);
    await until(async () => (await names()).length === 0);
  });

  test('a statement changing many searchable rows is heard once, and a change to no searched column not at all (migration 0026)', async () => {
    const owner = await makeUser();
    const circuits = await Promise.all([1, 2, 3].map((i) => makeCircuit(owner, { name: `heard-once-${i}` }, null)));
    const uids = circuits.map(({ circuit }) => circuit.uid);
    const listener = new Client({ connectionString: t.databaseUrl });
    await listener.connect();
    try {
      const payloads: string[] = [];
      listener.on('notification', (n) => {
        if (n.channel === SEARCH_CHANGED_CHANNEL) payloads.push(n.payload ?? '');
      });
      await listener.query(`LISTEN ${SEARCH_CHANGED_CHANNEL}`);
      await admin.query("UPDATE circuits SET description = 'changed together' WHERE uid = ANY($1::uuid[])", [uids]);
      await admin.query('UPDATE circuits SET updated_at = now() WHERE uid = ANY($1::uuid[])', [uids]);
      await admin.query("UPDATE circuits SET description = 'changed together' WHERE uid = ANY($1::uuid[])", [uids]);
      // Notifications arrive in commit order: once the marker is heard, everything before it has been.
      await admin.query('SELECT pg_notify($1, $2)', [SEARCH_CHANGED_CHANNEL, 'marker']);
      await until(() => payloads.includes('marker'));
      expect(payloads).toEqual(['', 'marker']);
    } finally {
      await listener.end();
    }
  });

  test('the GIN indexes of search keep no pending list (fastupdate off, migration 0026)', async () => {
    const { rows } = await admin.query(
      "SELECT relname, reloptions FROM pg_class WHERE relname IN ('circuits_search_idx', 'users_search_idx') ORDER BY relname",
    );
    expect(rows).toEqual([
      { relname: 'circuits_search_idx', reloptions: ['fastupdate=off'] },
      { relname: 'users_search_idx', reloptions: ['fastupdate=off'] },
    ]);
  });

  test('while the listener connection is down nothing is cached; it reconnects and caches again', async () => {
    expect(await servesCached('before')).toBe(true);
    const { rows } = await admin.query(
      `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
        WHERE application_name = 'circuit-search-cache' AND datname = current_database()`,
    );
    expect(rows).toHaveLength(1);
    // Lost: each search computes (a change could go unheard). Then the listener is back and pages are cached.
    await until(async () => !(await servesCached('during')));
    await until(() => servesCached('after'));
    const { rows: listeners } = await admin.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'circuit-search-cache' AND datname = current_database()`,
    );
    expect(listeners[0].n).toBe(1);
  });
});
