#!/usr/bin/env node
// Search cache misses: GET /api/v1/search with two random words per request (from a list of 190, so
// ~36,000 combinations: nearly every request misses the per-process cache) over 100,000 circuits and
// 10,000 users, side by side with an Express hello-world measured in the same run. Also prints the
// CPU each request cost the service and PostgreSQL (from /proc, so less sensitive to other load on
// the machine than the latencies). `npm run bench search-uncached`.
// Env: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 50), SEARCH_INDEX_MAX_MB (0: the SQL path alone).
const os = require('node:os');
const { startFixtures, spawnService, stopProcess, measure, helloBaseline, postmasterPid } = require('../lib/harness');
const { WORDS, seedSearch } = require('../lib/search-seed');

const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 50);
// SEARCH_INDEX_MAX_MB=0 measures the SQL path alone.
const INDEX_ENV = process.env.SEARCH_INDEX_MAX_MB !== undefined ? { SEARCH_INDEX_MAX_MB: process.env.SEARCH_INDEX_MAX_MB } : {};

async function main() {
  const fixtures = await startFixtures('search-uncached');
  let api;
  try {
    const { seededIn, counts } = await seedSearch(fixtures.db.url);
    console.log(`seeded ${counts.circuits} circuits and ${counts.users} users in ${(seededIn / 1000).toFixed(1)} s`);
    const started = Date.now();
    api = await spawnService('main.js', { ...fixtures.env, RUN_WORKER: 'false', SEARCH_RATE_LIMIT_PER_MINUTE: '1000000000', ...INDEX_ENV }, { alsoWaitFor: INDEX_ENV.SEARCH_INDEX_MAX_MB === '0' ? [] : ['search index loaded'] });
    console.log(`service ready${INDEX_ENV.SEARCH_INDEX_MAX_MB === '0' ? ' (in-process index off: SQL path)' : ' with its search index loaded'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const postgres = postmasterPid(fixtures.dir);

    console.log(`${CONNECTIONS} connections, ${SECONDS} s each, ${os.cpus().length} cores (load generator on the same machine)`);
    const rows = [];
    rows.push(await helloBaseline({ seconds: SECONDS, connections: CONNECTIONS }));
    const pick = () => WORDS[Math.floor(Math.random() * WORDS.length)];
    const row = await measure({
      label: 'GET /search, 2 random words (uncached)',
      url: `${api.url}/api/v1/search?search=x`,
      seconds: SECONDS,
      connections: CONNECTIONS,
      setupRequest: (req) => ({ ...req, path: `/api/v1/search?search=${pick()}%20${pick()}` }),
      cpu: { service: api.child.pid, postgres: { pid: postgres, children: true } },
    });
    rows.push(row);
    console.log(`uncached p95 ${row.p95_ms} ms: target ≤ 50 ms ${row.p95_ms <= 50 && row.errors === 0 ? 'met' : 'NOT met'}`);
    console.log(JSON.stringify({ scenario: 'search-uncached', connections: CONNECTIONS, seconds: SECONDS, counts, results: rows }));
  } finally {
    await stopProcess(api);
    await fixtures.stop();
  }
}

main().catch((error) => { console.error(error); process.exit(1); });
