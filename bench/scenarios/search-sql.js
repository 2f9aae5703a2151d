#!/usr/bin/env node
// The search statement alone: PostgreSQL's backend CPU per statement (from /proc, so the figure holds
// on a busy machine, where latencies do not), over the data of search-uncached (bench/lib/search-seed.js),
// 200 statements per kind of query on one connection, as the service sends them (named, generic plan).
// With BENCH_BEFORE_DIST (another build's dist/src), also that build's statement, and whether both
// give the same pages for a set of queries (two words, usernames, exact circuit and profile names,
// common words past the bound; three windows each). `npm run bench search-sql`.
// Env: BENCH_DATABASE_URL (a server on this machine to make the database on), BENCH_STATEMENTS (200).
require('reflect-metadata');
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require('pg');
const { dist, startFixtures } = require('../lib/harness');
const { WORDS, seedSearch } = require('../lib/search-seed');

const N = Number(process.env.BENCH_STATEMENTS || 200);
const BEFORE = process.env.BENCH_BEFORE_DIST ? path.resolve(process.env.BENCH_BEFORE_DIST) : undefined;
const random = (n) => Math.floor(Math.random() * n);
const pick = () => WORDS[random(WORDS.length)];
const KINDS = {
  '2 random words': () => [`${pick()} ${pick()}`, 0],
  'common word': () => [pick(), random(100) * 10],
  'rare word': () => [`user${1000 + random(9000)}`, 0],
  prefix: () => [pick().slice(0, 3), random(100) * 10],
  'no match': () => [`zq${random(1e6)}`, 0],
};
const words = (text) =>
  [
    ...new Set(
      text
        .toLowerCase()
        .split(/[^\p{L}\p{N}]+/u)
        .filter(Boolean),
    ),
  ]
    .slice(0, 8)
    .map((w) => w.slice(0, 64));
const values = (text, limit, offset) => [words(text), text.trim().toLowerCase(), limit, offset, 1000];
const cpuMs = (pid) => {
  const fields = fs
    .readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

function statements(distDir) {
  return require(path.join(distDir, 'graphql', 'search', 'search.query.js')).SEARCH_SQL;
}

async function main() {
  const fixtures = await startFixtures('search-sql');
  const client = new Client({ connectionString: fixtures.db.url });
  try {
    const { seededIn, counts } = await seedSearch(fixtures.db.url);
    console.log(`seeded ${counts.circuits} circuits and ${counts.users} users in ${(seededIn / 1000).toFixed(1)} s`);
    await client.connect();
    const {
      rows: [{ pid }],
    } = await client.query('SELECT pg_backend_pid() AS pid');
    if (!fs.existsSync(`/proc/${pid}/stat`))
      throw new Error('the PostgreSQL server must run on this machine (its backend CPU is read from /proc)');
    const builds = [...(BEFORE ? [['before', statements(BEFORE)]] : []), ['this build', statements(dist)]];
    const results = [];
    for (const [label, sql] of builds) {
      const name = `bench_${label.replace(/\W/g, '_')}`;
      const run = (text, offset) => client.query({ name, text: sql.all, values: values(text, 10, offset) });
      const row = { build: label };
      for (const [kind, next] of Object.entries(KINDS)) {
        for (let i = 0; i < 10; i++) await run(...next());
        const before = cpuMs(pid);
        for (let i = 0; i < N; i++) await run(...next());
        row[kind] = +((cpuMs(pid) - before) / N).toFixed(2);
      }
      console.log(
        `${label.padEnd(12)} PostgreSQL CPU per statement (ms): ${Object.keys(KINDS)
          .map((k) => `${k} ${row[k]}`)
          .join(', ')}`,
      );
      results.push(row);
    }
    if (BEFORE) {
      const [before, after] = [statements(BEFORE), statements(dist)];
      const names = (
        await client.query('SELECT name FROM circuits WHERE NOT is_private ORDER BY random() LIMIT 100')
      ).rows.map((r) => r.name);
      const people = (
        await client.query('SELECT username, name FROM users WHERE NOT is_private ORDER BY random() LIMIT 50')
      ).rows;
      const queries = [
        ...Array.from({ length: 100 }, () => `${pick()} ${pick()}`),
        ...Array.from({ length: 50 }, () => `user${1000 + random(9000)}`),
        ...names,
        ...people.flatMap((p) => [p.username, p.name.toLowerCase()]),
        'amber',
        'riv',
        'a b',
        'model',
      ];
      let same = 0;
      const different = [];
      for (const type of ['all', 'circuits', 'users']) {
        for (const text of queries) {
          for (const [limit, offset] of [
            [100, 0],
            [10, 0],
            [100, 100],
          ]) {
            const a = await client.query({
              name: `before_${type}`,
              text: before[type],
              values: values(text, limit, offset),
            });
            const b = await client.query({
              name: `after_${type}`,
              text: after[type],
              values: values(text, limit, offset),
            });
            if (JSON.stringify(a.rows) === JSON.stringify(b.rows)) same++;
            else different.push(`${type} "${text}" limit ${limit} offset ${offset}`);
          }
        }
      }
      console.log(
        `same pages: ${same} of ${same + different.length}${different.length ? `; different: ${different.slice(0, 10).join('; ')}` : ''}`,
      );
      results.push({ samePages: same, differentPages: different.length });
    }
    console.log(JSON.stringify({ scenario: 'search-sql', statements: N, counts, results }));
  } finally {
    await client.end().catch(() => {});
    await fixtures.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
