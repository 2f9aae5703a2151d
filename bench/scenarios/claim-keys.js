#!/usr/bin/env node
// The claim path with and without concurrency keys: what flow control costs a worker's claims and a run's end.
// `npm run bench claim-keys`; with BENCH_BEFORE_DIST=<another build>/dist/src, that build's claim statement is
// measured too, in the same rounds (the A/B of a change: build the commit before it into a directory of its own,
// with this checkout's node_modules).
//
// A fresh embedded PostgreSQL, migrated by this build. Each round seeds BENCH_RUNS (default 2000) PROVISIONED runs
// of one user straight into circuit_runs, then claims them as a worker does (claimRun through the claim batcher,
// with a worker's fairness room), BENCH_WAVE (default 50) claims at once; then ends BENCH_ENDS (default 300) of
// them one by one through finishRun (the charge, the ledger, the end triggers), and the rest in one statement. The
// variants, alternated round by round (BENCH_ROUNDS, default 5), so a noisy neighbour hits them alike:
//   before   the other build's claim statement, runs without keys (BENCH_BEFORE_DIST only);
//   no-keys  this build, runs without keys: what flow control costs those who do not use it;
//   keys     this build, every run with a concurrency key among BENCH_KEYS (default 10,000), limit 2.
// Reported per variant, medians over the rounds: claim wall ms per run, each claim call's p50/p95 ms, PostgreSQL
// CPU ms per claimed run and per ended run. Then the wake of waiting runs: BENCH_WAITING (default 10,000) runs
// marked waiting (slot_wait), keyed or not, and the median of 10 wake statements (limit 100, nothing queued).
const path = require('node:path');
const crypto = require('node:crypto');
const { performance } = require('node:perf_hooks');
const { startFixtures, cpuSeconds, postmasterPid, pct, dist } = require('../lib/harness');

const RUNS = Number(process.env.BENCH_RUNS || 2000);
const WAVE = Number(process.env.BENCH_WAVE || 50);
const ENDS = Number(process.env.BENCH_ENDS || 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const KEYS = Number(process.env.BENCH_KEYS || 10_000);
const WAITING = Number(process.env.BENCH_WAITING || 10_000);
const BEFORE = process.env.BENCH_BEFORE_DIST;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)] : NaN;
};

async function main() {
  const fixtures = await startFixtures('claim-keys');
  require('reflect-metadata');
  const { createSequelize } = require(path.join(dist, 'db', 'sequelize.js'));
  const { initModels } = require(path.join(dist, 'models', 'index.js'));
  const sequelize = createSequelize(fixtures.db.url, 8);
  initModels(sequelize);
  const after = require(path.join(dist, 'runs', 'transitions.js'));
  const builds = { after };
  if (BEFORE) builds.before = require(path.join(BEFORE, 'runs', 'transitions.js'));
  const query = (sql, bind = []) => sequelize.query(sql, { bind, type: 'SELECT' });
  const [{ user_uid, circuit_uid, version_uid }] = await query(
    `SELECT c.owner_uid AS user_uid, c.uid AS circuit_uid, c.primary_version_uid AS version_uid FROM circuits c WHERE c.name = 'hello'`,
  );
  const postgres = postmasterPid(fixtures.dir);
  const pgCpu = () => cpuSeconds(postgres, { children: true });
  const room = { userMax: 1e9, room: 1e9, shareMax: 1e9, userRoom: new Map() };
  const fairness = { room: () => room, claimed: () => {} };
  const worker = { name: 'bench', backendPid: null };

  const keyOf = (i) => `${circuit_uid}:customer-${i % KEYS}`;

  /** Inserts `count` PROVISIONED runs (keyed or not) as admission would leave them, their keys' rows counting them in flight; their uids. */
  async function seed(count, keyed, extra = '') {
    const uids = Array.from({ length: count }, () => crypto.randomUUID());
    const keys = keyed ? uids.map((_, i) => keyOf(i)) : uids.map(() => null);
    await query(
      `INSERT INTO circuit_runs (uid, user_uid, circuit_uid, circuit_version_uid, input, state, credits_held, enqueued_at,
                                 deadline_at, created_at, updated_at, concurrency_key, concurrency_limit${extra ? ', slot_wait' : ''})
       SELECT u, $2, $3, $4, '{}'::jsonb, 'PROVISIONED', 1, now(), now() + interval '1 hour', clock_timestamp(), now(), k,
              CASE WHEN k IS NULL THEN NULL ELSE 2 END${extra ? ', true' : ''}
         FROM unnest($1::uuid[], $5::text[]) AS s(u, k)`,
      [uids, user_uid, circuit_uid, version_uid, keys],
    );
    if (keyed) {
      await query(
        `INSERT INTO run_key_ends AS e (key, in_flight) SELECT k, count(*) FROM unnest($1::text[]) AS k GROUP BY k
         ON CONFLICT (key) DO UPDATE SET in_flight = e.in_flight + EXCLUDED.in_flight`,
        [keys],
      );
      await query(
        `INSERT INTO run_key_slots (key) SELECT DISTINCT k FROM unnest($1::text[]) AS k ON CONFLICT DO NOTHING`,
        [keys],
      );
    }
    return uids;
  }

  async function round(variant) {
    const transitions = variant === 'before' ? builds.before : builds.after;
    const uids = await seed(RUNS, variant === 'keys');
    const claims = transitions.createClaimBatcher(sequelize);
    const latencies = [];
    const cpu0 = pgCpu();
    const t0 = performance.now();
    let claimed = 0;
    for (let i = 0; i < uids.length; i += WAVE) {
      const results = await Promise.all(
        uids.slice(i, i + WAVE).map(async (uid) => {
          const started = performance.now();
          const claim = await transitions.claimRun(claims, uid, 60_000, undefined, worker, fairness);
          latencies.push(performance.now() - started);
          return claim;
        }),
      );
      claimed += results.filter(Boolean).length;
    }
    const claimMs = performance.now() - t0;
    const claimCpu = pgCpu() - cpu0;
    // Ends through the real path (charge, ledger, triggers), one at a time, then the rest at once (not measured).
    const claimedRows = await query(
      `SELECT uid, attempt FROM circuit_runs WHERE uid = ANY($1::uuid[]) AND state = 'RUNNING'`,
      [uids],
    );
    const cpu1 = pgCpu();
    const ends = claimedRows.slice(0, ENDS);
    for (const run of ends)
      await after.finishRun(sequelize, {
        uid: run.uid,
        attempt: run.attempt,
        state: 'COMPLETED',
        resultBlob: {},
        cost: 1,
      });
    const endCpu = pgCpu() - cpu1;
    // Each round starts from the same table: its runs gone and vacuumed (a claim's scan of in-flight runs would
    // otherwise meet the dead entries of the rounds before it, favouring whichever variant came first).
    await query(
      `UPDATE circuit_runs SET state = 'COMPLETED', ended_at = now() WHERE uid = ANY($1::uuid[]) AND state = 'RUNNING'`,
      [uids],
    );
    await query(`DELETE FROM credit_ledger WHERE run_uid = ANY($1::uuid[])`, [uids]);
    await query(`DELETE FROM circuit_runs WHERE uid = ANY($1::uuid[])`, [uids]);
    await sequelize.query('VACUUM ANALYZE circuit_runs');
    latencies.sort((a, b) => a - b);
    return {
      claimed,
      claim_ms_per_run: claimMs / RUNS,
      claim_p50_ms: pct(latencies, 50),
      claim_p95_ms: pct(latencies, 95),
      pg_cpu_ms_per_claim: (claimCpu * 1000) / RUNS,
      pg_cpu_ms_per_end: (endCpu * 1000) / Math.max(1, ends.length),
    };
  }

  const variants = [...(BEFORE ? ['before'] : []), 'no-keys', 'keys'];
  const results = Object.fromEntries(variants.map((v) => [v, []]));
  await round('no-keys'); // warm-up: plans, caches
  for (let r = 0; r < ROUNDS; r++) {
    for (const variant of r % 2 ? [...variants].reverse() : variants) {
      const result = await round(variant);
      if (result.claimed !== RUNS) throw new Error(`${variant}: claimed ${result.claimed} of ${RUNS}`);
      results[variant].push(result);
    }
    console.log(`  … round ${r + 1}/${ROUNDS}`);
  }
  const summary = Object.fromEntries(
    variants.map((variant) => [
      variant,
      Object.fromEntries(
        Object.keys(results[variant][0])
          .filter((k) => k !== 'claimed')
          .map((k) => [k, +median(results[variant].map((r) => r[k])).toFixed(3)]),
      ),
    ]),
  );

  // The wake of waiting runs: the statement every run's end in a worker sends.
  const wake = {};
  for (const keyed of [false, true]) {
    const uids = await seed(WAITING, keyed, 'slot_wait');
    const times = [];
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      // Limit 100, as a worker asks; every user skipped but none: the statement ranks them all, then the rows it
      // picks are put back to waiting (not measured) so that each call sees the same backlog.
      const picked = await after.wakeWaitingRuns(sequelize, 1e9, 100, []);
      times.push(performance.now() - t0);
      await query(`UPDATE circuit_runs SET slot_wait = true WHERE uid = ANY($1::uuid[])`, [picked]);
    }
    wake[keyed ? 'keys' : 'no-keys'] = { waiting: WAITING, wake_median_ms: +median(times).toFixed(2) };
    await query(
      `UPDATE circuit_runs SET state = 'EXCEPTION', slot_wait = false, ended_at = now() WHERE uid = ANY($1::uuid[])`,
      [uids],
    );
  }

  const result = {
    scenario: 'claim-keys',
    runs_per_round: RUNS,
    wave: WAVE,
    rounds: ROUNDS,
    keys: KEYS,
    claim: summary,
    wake,
  };
  console.log(JSON.stringify(result, null, 2));
  const base = summary.before ?? summary['no-keys'];
  const cost = (variant, field) => (((summary[variant][field] - base[field]) / base[field]) * 100).toFixed(1);
  console.log(
    `flow control against ${summary.before ? 'the build before' : 'no keys'}: PostgreSQL CPU per claim ` +
      `${summary.before ? `no-keys ${cost('no-keys', 'pg_cpu_ms_per_claim')} %, ` : ''}keys ${cost('keys', 'pg_cpu_ms_per_claim')} %; ` +
      `claim wall per run ${summary.before ? `no-keys ${cost('no-keys', 'claim_ms_per_run')} %, ` : ''}keys ${cost('keys', 'claim_ms_per_run')} %`,
  );
  await sequelize.close();
  await fixtures.stop();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
