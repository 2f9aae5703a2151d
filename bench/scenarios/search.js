#!/usr/bin/env node
// Search latency: GET /api/v1/search over 100,000 circuits and 10,000 users (bench/lib/search-seed.js), 50 concurrent clients.
// `npm run bench search` (builds dist/ first). Starts its own embedded PostgreSQL in a temp dir,
// seeds it with bulk SQL, runs the service in a child process (so the load generator does not
// share its event loop) and measures a common and a rare word with autocannon.
// Env: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 50).
/* global __filename */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork } = require('node:child_process');

const dist = path.join(__dirname, '..', '..', 'dist', 'src');
const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 50);
const { COMMON, RARE, WORDS, seedSearch } = require('../lib/search-seed');

// The child: run the service on the given database and report its URL.
if (process.argv[2] === '--serve') {
  (async () => {
    const { loadConfig } = require(path.join(dist, 'config.js'));
    const { startApp } = require(path.join(dist, 'app.js'));
    const config = {
      ...loadConfig({ LOG_LEVEL: 'silent', RUN_WORKER: 'false', DATA_DIR: process.argv[4] }),
      port: 0,
      searchRateLimitPerMinute: 1_000_000_000,
    };
    const app = await startApp({ config, databaseUrl: process.argv[3] });
    process.send({ url: app.url });
    process.on('message', async (m) => {
      if (m === 'stop') {
        await app.close();
        process.exit(0);
      }
    });
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
  return;
}

function percentile(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function measure(autocannon, url, label, setupRequest) {
  const latencies = [];
  let non2xx = 0;
  const run = (duration, record) =>
    new Promise((resolve, reject) => {
      const options = {
        url,
        connections: CONNECTIONS,
        duration,
        ...(setupRequest ? { requests: [{ setupRequest }] } : {}),
      };
      const instance = autocannon(options, (err, result) => (err ? reject(err) : resolve(result)));
      if (record) {
        instance.on('response', (_client, statusCode, _bytes, responseTime) => {
          latencies.push(responseTime);
          if (statusCode < 200 || statusCode >= 300) non2xx++;
        });
      }
    });
  await run(2, false); // warm-up
  const result = await run(SECONDS, true);
  latencies.sort((a, b) => a - b);
  const row = {
    label,
    requests: latencies.length,
    rps: Math.round(result.requests.average),
    p50: +percentile(latencies, 50).toFixed(2),
    p95: +percentile(latencies, 95).toFixed(2),
    p99: +percentile(latencies, 99).toFixed(2),
    non2xx,
  };
  console.log(
    `${label.padEnd(30)} ${String(row.requests).padStart(7)} req  ${String(row.rps).padStart(5)} req/s  p50 ${row.p50} ms  p95 ${row.p95} ms  p99 ${row.p99} ms  non-2xx ${non2xx}`,
  );
  return row;
}

async function main() {
  const { startEmbeddedDatabase } = require(path.join(dist, 'db', 'embedded.js'));
  const { createSequelize } = require(path.join(dist, 'db', 'sequelize.js'));
  const { migrate } = require(path.join(dist, 'db', 'migrate.js'));
  const { initModels } = require(path.join(dist, 'models', 'index.js'));
  const autocannon = require('autocannon');

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'circuits-bench-search-'));
  const db = await startEmbeddedDatabase(path.join(dir, 'data'));
  let child;
  try {
    const sequelize = createSequelize(db.url, 2);
    initModels(sequelize);
    await migrate(sequelize);
    await sequelize.close();
    const { seededIn, counts } = await seedSearch(db.url);
    console.log(
      `seeded ${counts.circuits} circuits and ${counts.users} users in ${(seededIn / 1000).toFixed(1)} s; ` +
        `"${COMMON}" matches ${counts.common} public circuits, "${RARE}" ${counts.rare}`,
    );

    child = fork(__filename, ['--serve', db.url, path.join(dir, 'app')], { stdio: 'inherit' });
    const { url } = await new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
    });
    console.log(
      `service at ${url}; ${CONNECTIONS} connections, ${SECONDS} s each, on ${os.cpus().length} cores (load generator on the same machine)`,
    );

    const rows = [];
    rows.push(await measure(autocannon, `${url}/api/v1/search?search=${COMMON}`, `common word "${COMMON}"`));
    rows.push(await measure(autocannon, `${url}/api/v1/search?search=${RARE}`, `rare word "${RARE}"`));
    rows.push(
      await measure(
        autocannon,
        `${url}/api/v1/search?search=${COMMON}&type=circuits&page=3`,
        `common, circuits, page 3`,
      ),
    );
    // Two random words per request (40,000 combinations): nearly every request misses the cache.
    const pick = () => WORDS[Math.floor(Math.random() * WORDS.length)];
    rows.push(
      await measure(autocannon, `${url}/api/v1/search?search=x`, 'random 2 words (uncached)', (req) => ({
        ...req,
        path: `/api/v1/search?search=${pick()}%20${pick()}`,
      })),
    );
    const target = rows.slice(0, 2).every((r) => r.p95 < 20 && r.non2xx === 0);
    console.log(`target p95 < 20 ms for the common and the rare word: ${target ? 'met' : 'NOT met'}`);
    console.log(
      JSON.stringify({ scenario: 'search', connections: CONNECTIONS, seconds: SECONDS, counts, results: rows }),
    );
  } finally {
    if (child && child.exitCode === null) {
      child.send('stop');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    await db.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
