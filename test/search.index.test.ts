import { Client, Pool } from 'pg';
import pino from 'pino';
import type { Sequelize } from 'sequelize';
import { createSequelize } from '../src/db/sequelize';
import { createLogger } from '../src/logger';
import { searchIndexFor } from '../src/graphql/search/search.cache';
import { SearchIndex } from '../src/graphql/search/search.index';
import { searchInIndex, searchInSql, searchWords, SEARCH_MATCH_BOUND } from '../src/graphql/search/search.query';
import { SearchType } from '../src/graphql/search/search.type';
import { compareCodePoints, parseTsVector } from '../src/graphql/search/ts-rank';
import { Corpus, type IndexedRow, type RankedRow } from '../src/graphql/search/search.corpus';
import { createTestDatabase } from './support/database';
import { startTestApp, type TestApp } from './support/app';
import { makeCircuit, makeUser } from './support/factories';

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)] };
}

// Words that share prefixes, repeat, carry digits, and some that the index leaves to the database.
const VOCABULARY = ['sun', 'sunset', 'sunny', 'summit', 'sum', 'river', 'rivet', 'rival', 'alpha', 'alps', 'al', 'model', 'mod',
  'data', 'database', 'date', 'x1', '1', '12', '123', '2024', 'v2', 'a', 'ab', 'abc', 'zebra', 'café', 'straße', '東京', 'naïve'];

describe('the in-process index answers exactly as the SQL path', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let sequelize: Sequelize;
  let index: SearchIndex;

  beforeAll(async () => {
    db = await createTestDatabase();
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      await seed(client);
    } finally {
      await client.end();
    }
    sequelize = createSequelize(db.url, 2);
    index = new SearchIndex(sequelize, createLogger('silent'), 2 ** 30, () => {});
    index.setLive(true);
    await index.settled();
    expect(index.usable).toBe(true);
  });
  afterAll(async () => {
    await sequelize?.close();
    await db.drop();
  });

  async function seed(client: Client): Promise<void> {
    const r = random(7);
    const text = (n: number) => Array.from({ length: n }, () => r.pick(VOCABULARY)).join(r.pick([' ', '-', ', ', ' ']));
    const users: unknown[][] = [];
    for (let i = 0; i < 300; i++) {
      users.push([`${r.pick(VOCABULARY.slice(0, 25))}_${i}`, r.next() < 0.2 ? 'Sun River' : text(2), text(r.int(6)), r.next() < 0.1]);
    }
    const { rows: owners } = await client.query(
      `INSERT INTO users (uid, username, name, bio, is_private)
       SELECT gen_random_uuid(), u->>0, u->>1, u->>2, (u->>3)::boolean FROM jsonb_array_elements($1::jsonb) u RETURNING uid`,
      [JSON.stringify(users)],
    );
    const circuits: unknown[][] = [];
    for (let i = 0; i < 3000; i++) {
      const name = r.next() < 0.05 ? r.pick(['sun river', 'Sun River', 'SUN-river', 'model', 'Model']) : `${text(2)}-${i}`;
      const description = r.next() < 0.01 ? Array(300).fill(r.pick(VOCABULARY)).join(' ') : r.next() < 0.4 ? `${text(r.int(10))} model` : text(r.int(10));
      circuits.push([owners[r.int(owners.length)].uid, name, description, r.next() < 0.1]);
    }
    await client.query(
      `INSERT INTO circuits (uid, owner_uid, name, description, is_private)
       SELECT gen_random_uuid(), (c->>0)::uuid, c->>1, c->>2, (c->>3)::boolean FROM jsonb_array_elements($1::jsonb) c
       ON CONFLICT DO NOTHING`,
      [JSON.stringify(circuits)],
    );
  }

  test('for a thousand random queries: the same items in the same order, and the same total', async () => {
    const r = random(42);
    const word = () => {
      const w = r.pick([...VOCABULARY, 'zzz', 'q']);
      return r.next() < 0.4 ? w.slice(0, 1 + r.int(w.length)) : w;
    };
    let compared = 0;
    let atBound = 0;
    for (let i = 0; i < 1000; i++) {
      const text = r.next() < 0.1 ? r.pick(['sun river', 'Sun River ', 'sun-river', 'model', 'MODEL']) : Array.from({ length: 1 + r.int(3) }, word).join(r.pick([' ', '-', ' ']));
      const words = searchWords(text);
      if (!words.length) continue;
      const exact = text.trim().toLowerCase();
      const type = r.pick([SearchType.all, SearchType.circuits, SearchType.users]);
      const window = { limit: 1 + r.int(30), page: 1, offset: r.pick([0, 0, 0, r.int(50), 990 + r.int(20)]) };
      const fromIndex = searchInIndex(index, words, exact, type, window);
      if (!words.every((w) => /^[a-z0-9]+$/.test(w))) {
        expect(fromIndex).toBeUndefined();
        continue;
      }
      const fromSql = await searchInSql(sequelize, words, exact, type, window);
      compared++;
      if (fromSql.totalCount === SEARCH_MATCH_BOUND) {
        // Past the bound, which matches get ranked is the order an index yields them in (documented).
        atBound++;
        expect({ text, type, window, total: fromIndex!.totalCount, size: fromIndex!.items.length }).toEqual({ text, type, window, total: fromSql.totalCount, size: fromSql.items.length });
        continue;
      }
      expect({ text, type, window, ...fromIndex }).toEqual({ text, type, window, ...fromSql });
    }
    expect(compared).toBeGreaterThan(700);
    expect(atBound).toBeGreaterThan(0);
  });

  test('past the bound an exact name match still comes first and the total is the bound', async () => {
    const page = searchInIndex(index, ['model'], 'model', SearchType.circuits, { limit: 5, page: 1, offset: 0 })!;
    expect(page.totalCount).toBe(SEARCH_MATCH_BOUND);
    expect(page.items[0]).toMatchObject({ type: 'circuit', name: expect.stringMatching(/^model$/i) });
  });

  test('rows over the memory budget leave the index off (and empty); searches then go to SQL', async () => {
    const small = new SearchIndex(sequelize, createLogger('silent'), 100_000, () => {});
    small.setLive(true);
    await small.settled();
    expect(small.usable).toBe(false);
    expect(searchInIndex(small, ['sun'], 'sun', SearchType.all, { limit: 10, page: 1, offset: 0 })).toBeUndefined();
    small.setLive(false);
  });

  test('ties are ordered by code point, as COLLATE "C" orders them', () => {
    expect(['b', 'a', '\u{1F600}', '\uFF21', 'Z', 'é'].sort(compareCodePoints)).toEqual(['Z', 'a', 'b', 'é', '\uFF21', '\u{1F600}']);
  });
});

test('a corpus after many updates and removals (its arena compacted) answers as one built from the rows left', async () => {
  const r = random(3);
  const words = ['sun', 'sunset', 'river', 'rival', 'moon', 'alpha', 'al'];
  const rowOf = (i: number, version: number): IndexedRow => {
    const lexemes = [...new Set(Array.from({ length: 2 + r.int(6) }, () => r.pick(words)))].sort();
    const text = lexemes.map((l) => `'${l}':${Array.from({ length: 1 + r.int(40) }, (_, k) => `${k * 3 + 1 + r.int(3)}${r.pick(['A', 'B', 'C', ''])}`).join(',')}`).join(' ');
    const name = `row-${i}-${version}`;
    return { row: { uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, sortName: name, exactNames: [name], display: { name, username: 'u', description: null, bio: null } }, vector: parseTsVector(text) };
  };
  const corpus = new Corpus('circuits');
  const current = new Map<number, IndexedRow>();
  for (let i = 0; i < 3000; i++) corpus.upsert(current.set(i, rowOf(i, 0)).get(i)!);
  for (let round = 1; round <= 3; round++) {
    for (let i = 0; i < 3000; i++) {
      if (r.next() < 0.5) {
        corpus.remove(current.get(i)?.row.uid ?? '');
        current.delete(i);
      } else corpus.upsert(current.set(i, rowOf(i, round)).get(i)!);
    }
  }
  // Then removals alone (nine rows in ten), so that a compaction moves rows it did not just write.
  for (let i = 0; i < 3000; i++) {
    if (i % 10) {
      corpus.remove(current.get(i)?.row.uid ?? '');
      current.delete(i);
    }
  }
  const rebuilt = await Corpus.of('circuits', [...current.values()]);
  const ranked = (c: Corpus, query: string[]) => {
    const into: RankedRow[] = [];
    const matched = c.search(query, 'row-1-1', 10_000, into);
    return { matched, rows: into.map((x) => [x.row.uid, x.rank]).sort() };
  };
  expect(corpus.size).toBe(current.size);
  for (const query of [['sun'], ['su', 'ri'], ['al'], ['alpha', 'moon', 'river'], ['s', 'r', 'm', 'a']]) {
    expect(ranked(corpus, query)).toEqual(ranked(rebuilt, query));
  }
});

describe('the index of a running service stays current', () => {
  let t: TestApp;
  let client: Client;
  const index = () => searchIndexFor(t.app.services.sequelize)!;
  const find = async (text: string) => (await t.rest('GET', `/search?search=${encodeURIComponent(text)}&limit=100`)).body.data as { uid: string; name?: string; description?: string; username: string }[];

  beforeAll(async () => {
    t = await startTestApp({ searchRateLimitPerMinute: 100_000 });
    client = new Client({ connectionString: t.databaseUrl });
    await client.connect();
    await until(() => index().usable);
  });
  afterAll(async () => {
    await client.end();
    await t.close();
  });

  test('changes committed by another process reach it row by row, and it keeps answering', async () => {
    const owner = await makeUser({ username: 'quokka-owner' });
    const { circuit } = await makeCircuit(owner, { name: 'quokka-finder', description: 'finds quokkas' }, null);
    await until(async () => (await find('quokka finder')).some((c) => c.uid === circuit.uid));

    await client.query(`UPDATE circuits SET is_private = true WHERE uid = $1`, [circuit.uid]);
    await until(async () => !(await find('quokka')).some((c) => c.uid === circuit.uid));
    await client.query(`UPDATE circuits SET is_private = false, description = 'spots wombats' WHERE uid = $1`, [circuit.uid]);
    await until(async () => (await find('wombat')).some((c) => c.uid === circuit.uid));
    expect(await find('finds')).toEqual([]);

    await client.query(`UPDATE users SET username = 'wombat-owner' WHERE uid = $1`, [owner.user.uid]);
    await until(async () => (await find('wombat')).find((c) => c.uid === circuit.uid)?.username === 'wombat-owner');

    await client.query(`DELETE FROM circuits WHERE uid = $1`, [circuit.uid]);
    await until(async () => !(await find('wombat')).some((c) => c.uid === circuit.uid));
    await index().settled();
    expect(index().usable).toBe(true);
    expect(searchInIndex(index(), ['wombat'], 'wombat', SearchType.circuits, { limit: 10, page: 1, offset: 0 })).toEqual({ items: [], totalCount: 0 });
  });

  test('a statement over more than 100 rows reloads the index, which answers again afterwards', async () => {
    const owner = await makeUser({ username: 'bulk-owner' });
    await client.query(
      `INSERT INTO circuits (uid, owner_uid, name, description) SELECT gen_random_uuid(), $1, 'bulky-' || g, 'numbat' FROM generate_series(1, 150) g`,
      [owner.user.uid],
    );
    await until(async () => index().usable && searchInIndex(index(), ['numbat'], 'numbat', SearchType.circuits, { limit: 1, page: 1, offset: 0 })?.totalCount === 150);
  });

  test("this process's own write is seen by its very next search", async () => {
    const owner = await makeUser({ username: 'local-owner' });
    const { circuit } = await makeCircuit(owner, { name: 'local-one', description: 'echidna' }, null);
    await until(async () => (await find('echidna')).length === 1);
    for (const word of ['platypus', 'bilby', 'dingo']) {
      const res = await t.rest('PUT', '/users/local-owner/circuits/local-one', { token: owner.token, body: { description: word } });
      expect(res.status).toBe(200);
      expect((await find(word)).map((c) => c.uid)).toEqual([circuit.uid]);
    }
    await until(() => index().usable);
  });

  test('after hundreds of changes made while it answers searches, it answers as the SQL path', async () => {
    const owner = await makeUser({ username: 'churn-owner' });
    const r = random(11);
    const words = ['kiwi', 'kiwano', 'kumquat', 'lime', 'lychee'];
    const text = () => Array.from({ length: 1 + r.int(4) }, () => r.pick(words)).join(' ');
    const { rows } = await client.query<{ uid: string }>(
      `INSERT INTO circuits (uid, owner_uid, name, description) SELECT gen_random_uuid(), $1, 'churn-' || g, $2 FROM generate_series(1, 60) g RETURNING uid`,
      [owner.user.uid, 'kiwi lime'],
    );
    const uids = rows.map((row) => row.uid);
    // Changes from several connections at once (one Client takes one query at a time).
    const pool = new Pool({ connectionString: t.databaseUrl, max: 4 });
    const changes = Array.from({ length: 300 }, async (_, i) => {
      const uid = r.pick(uids);
      const change = r.int(5);
      if (change === 0) await pool.query(`UPDATE circuits SET is_private = NOT is_private WHERE uid = $1`, [uid]);
      else if (change === 1) await pool.query(`UPDATE circuits SET description = $2 WHERE uid = $1`, [uid, text()]);
      else if (change === 2) await pool.query(`UPDATE circuits SET name = $2 WHERE uid = $1`, [uid, `churn-${i}-${r.pick(words)}`]).catch(() => {});
      else if (change === 3) await pool.query(`DELETE FROM circuits WHERE uid = $1`, [uid]);
      else {
        const { rows: [added] } = await pool.query<{ uid: string }>(
          `INSERT INTO circuits (uid, owner_uid, name, description) VALUES (gen_random_uuid(), $1, $2, $3) RETURNING uid`, [owner.user.uid, `churn-new-${i}`, text()]);
        uids.push(added.uid);
      }
    });
    const searches = Array.from({ length: 300 }, () => find(r.pick(words)));
    await Promise.all([...changes, ...searches]);
    await pool.end();
    // The last changes' notifications may still be on their way: the answers must agree once they are in.
    const answers = async (query: string) => {
      const w = searchWords(query);
      const window = { limit: 100, page: 1, offset: 0 };
      await index().settled();
      return [searchInIndex(index(), w, query, SearchType.all, window), await searchInSql(t.app.services.sequelize, w, query, SearchType.all, window)];
    };
    for (const query of [...words, 'kiwi lime', 'k', 'churn', 'l ky']) {
      await until(async () => {
        const [fromIndex, fromSql] = await answers(query);
        return JSON.stringify(fromIndex) === JSON.stringify(fromSql);
      }).catch(() => {});
      const [fromIndex, fromSql] = await answers(query);
      expect({ query, ...fromIndex }).toEqual({ query, ...fromSql });
    }
  });

  test("this process's own write made while the index reloads is seen by its next search", async () => {
    const owner = await makeUser({ username: 'reload-owner' });
    for (let round = 0; round < 8; round++) {
      // More than 100 rows in one statement: every process reloads its index.
      await t.app.services.sequelize.query(
        `INSERT INTO circuits (uid, owner_uid, name, description) SELECT gen_random_uuid(), :owner, 'filler-${round}-' || g, 'filler' FROM generate_series(1, 150) g`,
        { replacements: { owner: owner.user.uid } },
      );
      await new Promise((resolve) => setTimeout(resolve, round * 3));
      const { circuit } = await makeCircuit(owner, { name: `quoll-${round}`, description: `quoll${round}` }, null);
      expect((await find(`quoll${round}`)).map((c) => c.uid)).toEqual([circuit.uid]);
    }
  });

  test('while the listener is down the index does not answer; it reloads when the listener is back', async () => {
    await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'circuit-search-cache' AND datname = current_database()`);
    await until(() => !index().usable);
    const owner = await makeUser({ username: 'gap-owner' });
    await client.query(`INSERT INTO circuits (uid, owner_uid, name, description) VALUES (gen_random_uuid(), $1, 'gap-circuit', 'bandicoot')`, [owner.user.uid]);
    expect((await find('bandicoot')).map((c) => c.name)).toEqual(['gap-circuit']);
    await until(() => index().usable, 15_000);
    expect(searchInIndex(index(), ['bandicoot'], 'bandicoot', SearchType.all, { limit: 10, page: 1, offset: 0 })?.totalCount).toBe(1);
  });
});

test('a load that keeps failing is retried ever less often, and the index meanwhile does not answer', async () => {
  const db = await createTestDatabase();
  const sequelize = createSequelize(db.url, 1);
  await db.drop();
  const lines: { msg: string; retryMs?: number }[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => { lines.push(JSON.parse(line)); } });
  const index = new SearchIndex(sequelize, log, 2 ** 30, () => {});
  try {
    index.setLive(true);
    await until(() => lines.length >= 2, 5_000);
    expect(index.usable).toBe(false);
    expect(lines.slice(0, 2).map((l) => [l.msg, l.retryMs])).toEqual([
      ['search index: could not read the rows; searching in SQL until a load succeeds', 1000],
      ['search index: could not read the rows; searching in SQL until a load succeeds', 2000],
    ]);
  } finally {
    index.setLive(false);
    await sequelize.close();
  }
});

test('with SEARCH_INDEX_MAX_MB=0 the index is off and search runs in SQL', async () => {
  const t = await startTestApp({ searchRateLimitPerMinute: 100_000, searchIndexMaxMb: 0 });
  try {
    const owner = await makeUser({ username: 'capped-owner' });
    await makeCircuit(owner, { name: 'capped', description: 'kookaburra' }, null);
    await searchIndexFor(t.app.services.sequelize)!.settled();
    expect(searchIndexFor(t.app.services.sequelize)!.usable).toBe(false);
    const res = await t.rest('GET', '/search?search=kookaburra');
    expect(res.body.data.map((d: { name: string }) => d.name)).toEqual(['capped']);
  } finally {
    await t.close();
  }
});
