import { QueryTypes } from 'sequelize';
import { Circuit, User } from '../src/models';
import { SEARCH_SQL } from '../src/graphql/search/search.query';
import { startTestApp, TestApp } from './support/app';
import { makeCircuit, makeUser } from './support/factories';

// A one-word search that stands for exactly one known word reads search_postings (migration 0030) instead
// of ranking heap rows: these tests prove the table follows every write and gives the true ranking.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ searchRateLimitPerMinute: 100_000 });
});
afterAll(async () => {
  await t.close();
});

const search = (query: string) => t.rest('GET', `/search?${query}`);
const sql = <T extends object>(text: string, replacements: Record<string, unknown> = {}) =>
  t.app.services.sequelize.query<T>(text, { replacements, type: QueryTypes.SELECT });

/** Rows of search_postings that differ from what the public rows' vectors say they should be (both ways). */
async function postingsDrift(): Promise<unknown[]> {
  const expected = `
    SELECT 'c'::"char" AS kind, l.word, c.uid, ts_rank(c.search_vector, to_tsquery('simple', quote_literal(l.word))) AS rank, c.name AS sort_name
      FROM circuits c, unnest(tsvector_to_array(c.search_vector)) l(word) WHERE NOT c.is_private
    UNION ALL
    SELECT 'u', l.word, u.uid, ts_rank(u.search_vector, to_tsquery('simple', quote_literal(l.word))), u.username
      FROM users u, unnest(tsvector_to_array(u.search_vector)) l(word) WHERE NOT u.is_private`;
  const stored = 'SELECT kind, word, uid, rank, sort_name FROM search_postings';
  return sql(`((${expected}) EXCEPT ALL ${stored}) UNION ALL (${stored} EXCEPT ALL (${expected}))`);
}

/** The uids of the true ranking of every public match of one word as a prefix, as docs/search.md orders them. */
async function trueRanking(word: string, type: 'circuits' | 'users', limit: number, offset: number): Promise<string[]> {
  const rows = await sql<{ uid: string }>(
    type === 'circuits'
      ? `SELECT uid FROM circuits WHERE NOT is_private AND search_vector @@ to_tsquery('simple', :w || ':*')
          ORDER BY ts_rank(search_vector, to_tsquery('simple', :w || ':*')) + CASE WHEN lower(name) = :w THEN 10 ELSE 0 END DESC,
                   name COLLATE "C", uid LIMIT :limit OFFSET :offset`
      : `SELECT uid FROM users WHERE NOT is_private AND search_vector @@ to_tsquery('simple', :w || ':*')
          ORDER BY ts_rank(search_vector, to_tsquery('simple', :w || ':*')) + CASE WHEN username = :w OR lower(name) = :w THEN 10 ELSE 0 END DESC,
                   username COLLATE "C", uid LIMIT :limit OFFSET :offset`,
    { w: word, limit, offset },
  );
  return rows.map((r) => r.uid);
}

test('search_postings follows inserts, updates, privacy, renames, username changes and deletes', async () => {
  const owner = await makeUser({ username: 'posting-owner', bio: 'okapi watcher' });
  const { circuit } = await makeCircuit(owner, { name: 'okapi-tracker', description: 'tracks an okapi' }, null);
  await makeCircuit(owner, { name: 'okapi-hidden', description: 'okapi', isPrivate: true }, null);
  await t.app.services.sequelize.query(
    `INSERT INTO circuits (uid, owner_uid, name, description, is_private)
     SELECT gen_random_uuid(), :owner, 'bulk-okapi-' || g, 'okapi okapi herd', g % 3 = 0 FROM generate_series(1, 30) g`,
    { replacements: { owner: owner.user.uid } },
  );
  expect(await postingsDrift()).toEqual([]);
  await circuit.update({ description: 'follows a tapir' });
  await circuit.update({ name: 'aardvark-okapi' });
  await Circuit.update({ is_private: true }, { where: { name: 'bulk-okapi-1' } });
  await Circuit.update({ is_private: false }, { where: { name: 'bulk-okapi-3' } });
  await User.update({ username: 'posting-renamed' }, { where: { uid: owner.user.uid } });
  await User.update({ bio: 'tapir fan' }, { where: { uid: owner.user.uid } });
  expect(await postingsDrift()).toEqual([]);
  await Circuit.destroy({ where: { name: ['bulk-okapi-2', 'bulk-okapi-3'] } });
  expect(await postingsDrift()).toEqual([]);
  const other = await makeUser({ username: 'posting-leaver', bio: 'okapi' });
  await makeCircuit(other, { name: 'leaver-okapi' }, null);
  await User.update({ is_private: true }, { where: { uid: other.user.uid } });
  expect(await postingsDrift()).toEqual([]);
  await User.destroy({ where: { uid: other.user.uid } });
  expect(await postingsDrift()).toEqual([]);
});

test('a one-word search gives the true ranking, exact name first, private rows neither returned nor counted', async () => {
  const owner = await makeUser({ username: 'ibex-owner', name: 'Ibex Fan' });
  await makeCircuit(owner, { name: 'ibex', description: 'the exact one' }, null);
  for (let i = 0; i < 12; i++) {
    await makeCircuit(
      owner,
      {
        name: `herd-${String.fromCharCode(122 - i)}`,
        description: i % 2 ? 'ibex ibex ibex' : 'an ibex',
        isPrivate: i % 4 === 3,
      },
      null,
    );
  }
  await makeCircuit(owner, { name: 'ibex-in-name', description: 'x' }, null);
  for (const [query, type] of [
    ['ibex', 'circuits'],
    ['ibe', 'circuits'],
    ['ibex', 'users'],
  ] as const) {
    const page = await search(`search=${query}&type=${type}&limit=100`);
    const truth = await trueRanking(query, type, 100, 0);
    expect(page.body.data.map((d: any) => d.uid)).toEqual(truth);
    expect(page.body.meta.total_count).toBe(truth.length);
    const middle = await search(`search=${query}&type=${type}&limit=3&page=2`);
    expect(middle.body.data.map((d: any) => d.uid)).toEqual(truth.slice(3, 6));
  }
  const circuits = await search('search=ibex&type=circuits&limit=100');
  expect(circuits.body.data[0]).toMatchObject({ name: 'ibex' });
  expect(circuits.body.meta.total_count).toBe(1 + 9 + 1);
  const names = circuits.body.data.map((d: any) => d.name);
  for (let i = 3; i < 12; i += 4) expect(names).not.toContain(`herd-${String.fromCharCode(122 - i)}`);
});

test('the one-word path reads search_postings_ranked_idx index only, whatever the type (word leads the index)', async () => {
  const client = await (t.app.services.sequelize.connectionManager as any).getConnection();
  try {
    const run = (text: string) =>
      new Promise<any>((resolve, reject) =>
        client.query(text, (error: Error, result: any) => (error ? reject(error) : resolve(result))),
      );
    await run('BEGIN');
    await run('SET LOCAL enable_seqscan = off');
    await run('SET LOCAL plan_cache_mode = force_generic_plan');
    for (const type of ['all', 'circuits', 'users'] as const) {
      await run(`PREPARE one_word_${type}(text[], text, int, int, int) AS ${SEARCH_SQL[type]}`);
      const plan = (await run(`EXPLAIN EXECUTE one_word_${type}('{ibex}', 'ibex', 10, 20, 1000)`)).rows
        .map((r: any) => r['QUERY PLAN'])
        .join('\n');
      // Both reads of the postings (the page and the count) look the word up: an index condition on it.
      const scans = plan.split('Index Only Scan using search_postings_ranked_idx').slice(1);
      expect(scans).toHaveLength(2);
      for (const scan of scans) expect(scan).toMatch(/^[^\n]*\n\s*Index Cond: \(word = /);
      expect(plan).not.toMatch(/Seq Scan on search_postings/);
    }
  } finally {
    await new Promise((resolve) => client.query('ROLLBACK', resolve));
    (t.app.services.sequelize.connectionManager as any).releaseConnection(client);
  }
});
