#!/usr/bin/env node
// Search cache misses over 100,000 circuits and 10,000 users (bench/lib/search-seed.js): GET /api/v1/search,
// 50 connections, one row per kind of query, each request drawn at random so that nearly every one
// misses the per-process page cache:
// - 2 random words: two of the 190 seed words (~36,000 pairs; ~250 circuits match both);
// - common word: one seed word (each is in ~5,000 circuits: past the 1,000 bound), a random page of 100;
// - rare word: `userNNNN`, one of 9,000 owners' usernames (its profile and its ~10 circuits);
// - prefix: the first 3 letters of a seed word, a random page of 100;
// - no match: `zq` and 6 random digits.
// Also an Express hello-world measured in the same run (the machine's speed at that moment), and the CPU
// each request cost the service and PostgreSQL (from /proc: less sensitive to other load than latencies).
// `npm run bench search-uncached`.
// Env: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 50), BENCH_DATABASE_URL (a server to
// make the database on, when the embedded PostgreSQL cannot run), BENCH_BEFORE_DIST (another build's
// dist/src, e.g. of the commit before, measured first on the same data: as shipped and, when that
// build has the in-process index, with SEARCH_INDEX_MAX_MB=0), BENCH_QUERIES (comma-separated kinds),
// BENCH_WARM_UP_SECONDS (default 10: every kind mixed, not recorded, after each build starts).
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const {
  dist,
  startFixtures,
  spawnService,
  stopProcess,
  measure,
  warmUp,
  helloBaseline,
  postmasterPid,
} = require('../lib/harness');
const { WORDS, seedSearch } = require('../lib/search-seed');

const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 50);
const TARGET_P95_MS = 100;
const BEFORE = process.env.BENCH_BEFORE_DIST ? path.resolve(process.env.BENCH_BEFORE_DIST) : undefined;

const random = (n) => Math.floor(Math.random() * n);
const pick = () => WORDS[random(WORDS.length)];
const QUERIES = {
  '2 random words': () => `search=${pick()}%20${pick()}`,
  'common word': () => `search=${pick()}&page=${1 + random(100)}`,
  'rare word': () => `search=user${1000 + random(9000)}`,
  prefix: () => `search=${pick().slice(0, 3)}&page=${1 + random(100)}`,
  'no match': () => `search=zq${String(random(1e6)).padStart(6, '0')}`,
};
const kinds = process.env.BENCH_QUERIES ? process.env.BENCH_QUERIES.split(',') : Object.keys(QUERIES);

/** The builds to measure, the one of this checkout last. */
function builds() {
  const list = [];
  if (BEFORE) {
    const hasIndex = (() => {
      try {
        require.resolve(path.join(BEFORE, 'graphql', 'search', 'search.index.js'));
        return true;
      } catch {
        return false;
      }
    })();
    list.push({ label: 'before', distDir: BEFORE, env: {}, waitFor: hasIndex ? ['search index loaded'] : [] });
    if (hasIndex)
      list.push({ label: 'before, SQL path', distDir: BEFORE, env: { SEARCH_INDEX_MAX_MB: '0' }, waitFor: [] });
  }
  list.push({
    label: 'this build',
    distDir: process.env.BENCH_SERVICE_DIST ? path.resolve(process.env.BENCH_SERVICE_DIST) : dist,
    env: {},
    waitFor: [],
  });
  return list;
}

/** PostgreSQL's CPU: the embedded server's processes, or else the backends of the bench's database. */
function postgresCpu(fixtures) {
  const postmaster = postmasterPid(fixtures.dir);
  if (postmaster) return { pid: postmaster, children: true };
  return {
    async pidsOf() {
      const client = new Client({ connectionString: fixtures.db.url });
      await client.connect();
      try {
        const { rows } = await client.query(
          'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        );
        return rows.map((r) => r.pid);
      } finally {
        await client.end();
      }
    },
  };
}

async function main() {
  const fixtures = await startFixtures('search-uncached');
  const results = [];
  try {
    const { seededIn, counts } = await seedSearch(fixtures.db.url);
    console.log(`seeded ${counts.circuits} circuits and ${counts.users} users in ${(seededIn / 1000).toFixed(1)} s`);
    console.log(
      `${CONNECTIONS} connections, ${SECONDS} s each, ${os.cpus().length} cores (load generator on the same machine), load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    results.push(await helloBaseline({ seconds: SECONDS, connections: CONNECTIONS }));
    for (const build of builds()) {
      const started = Date.now();
      const api = await spawnService(
        'main.js',
        { ...fixtures.env, RUN_WORKER: 'false', SEARCH_RATE_LIMIT_PER_MINUTE: '1000000000', ...build.env },
        { alsoWaitFor: build.waitFor, distDir: build.distDir },
      );
      console.log(
        `-- ${build.label} (${build.distDir}${Object.keys(build.env).length ? `, ${JSON.stringify(build.env)}` : ''}): ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      try {
        // Every kind, mixed, before the first is measured: otherwise whichever kind comes first also pays the
        // new process's warm-up (its service CPU per search measured 1.2-1.7 ms first, 0.7-1.0 ms after).
        const all = Object.keys(QUERIES);
        await warmUp({
          url: `${api.url}/api/v1/search?search=x`,
          seconds: WARM_UP_SECONDS,
          connections: CONNECTIONS,
          setupRequest: (req) => ({ ...req, path: `/api/v1/search?${QUERIES[all[random(all.length)]]()}` }),
        });
        for (const kind of kinds) {
          const row = await measure({
            label: `${build.label}: ${kind}`,
            url: `${api.url}/api/v1/search?search=x`,
            seconds: SECONDS,
            connections: CONNECTIONS,
            setupRequest: (req) => ({ ...req, path: `/api/v1/search?${QUERIES[kind]()}` }),
            cpu: { service: api.child.pid, postgres: postgresCpu(fixtures) },
          });
          results.push({ build: build.label, kind, ...row });
        }
      } finally {
        await stopProcess(api);
      }
    }
    for (const row of results.filter((r) => r.build === 'this build')) {
      console.log(
        `${row.kind.padEnd(16)} p95 ${row.p95_ms} ms: target ≤ ${TARGET_P95_MS} ms ${row.p95_ms <= TARGET_P95_MS && row.errors === 0 ? 'met' : 'NOT met'}`,
      );
    }
    console.log(
      JSON.stringify({ scenario: 'search-uncached', connections: CONNECTIONS, seconds: SECONDS, counts, results }),
    );
  } finally {
    await fixtures.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
