#!/usr/bin/env node
// Parked runs: BENCH_PARKED_RUNS (default 100000) runs of `[wait for signal "reply"] → [transform]`, in the
// default deployment (one main.js that serves the API and executes runs, as `npm start`), with
// RUN_PARK_AFTER_S=BENCH_PARK_AFTER_S (default 1, instead of 30) so that a run parks one second after it
// starts waiting. `npm run bench parked`.
//
// 1. Memory: the PSS (/proc/<pid>/smaps_rollup) of the service (main.js and any process under it) and of
//    PostgreSQL (the embedded postmaster and every process under it: backends, background workers) idle —
//    "fresh" 5 s after the start, and "settled" BENCH_PARKED_IDLE_SETTLE_S (default 40) after it —, "warm"
//    (after the baseline runs below and BENCH_PARKED_SETTLE_S, default 60, more), then after every run is
//    parked (circuit_runs.parked_at set), sampled every 5 s for BENCH_PARKED_SETTLE_S more. Target: the
//    service settled within 50 MB of idle settled. Why settled: V8 hands back the heap a burst of work grew
//    only when its memory reducer runs, ~20–30 s after the burst's last full collection (10,000 runs parked:
//    the service's anonymous memory 248 MB when the last one parked, 105 MB 30 s later, against 88 MB idle
//    settled and 142 MB 5 s after the start). The runs are created by batches of 1000
//    (POST /circuit-adaptors/{uid}/batches, BENCH_PARKED_SUBMITTERS at once, default 4), paced so that at
//    most BENCH_PARKED_BACKLOG (default 10000) wait PROVISIONED: a run's deadline (RUN_DEADLINE_SECONDS,
//    600 s) counts from its creation, and 100,000 runs queued at once on 2 cores outlast it. The CPU the
//    processes spend while everything is parked is measured over 10 s.
// 2. Throughput: BENCH_PARKED_SIGNALS (default 10000) of the parked runs get their signal through the
//    owner's REST endpoint (POST /circuit-runs/{uid}/signals/reply), or with BENCH_PARKED_SIGNAL_VIA=callback
//    through their callback URLs (no token), BENCH_PARKED_SIGNALERS (default 200) in flight; timed from the
//    first signal sent until all of those runs are COMPLETED (their ends heard on the run-state channel,
//    LISTEN circuit_run_state, so that no polling weighs on PostgreSQL). Target ≥ 250 runs/s.
// Baselines from the same run: the idle and warm PSS for memory; the Express hello-world yardstick (5 s)
// for the machine; and BENCH_PARKED_BASELINE_RUNS (default 10000, 0 skips) runs of a circuit of the same
// transform alone, created by batches before the parked runs (the warm-up), timed from the first batch
// sent until all are COMPLETED: what the same work costs without a wait.
// Bounded: every phase stops after BENCH_MAX_SECONDS (default 1800) in all, reporting what it reached.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { Client, Pool } = require('pg');
const {
  dist,
  startFixtures,
  spawnService,
  stopProcess,
  sleep,
  pct,
  cpuSeconds,
  postmasterPid,
  jsonClient,
  helloBaseline,
  DEFAULT_SHAPE,
  pssOf,
  processTree,
} = require('../lib/harness');

const RUNS = Number(process.env.BENCH_PARKED_RUNS || 100_000);
const SIGNALS = Math.min(RUNS, Number(process.env.BENCH_PARKED_SIGNALS || 10_000));
const SIGNALERS = Number(process.env.BENCH_PARKED_SIGNALERS || 200);
const SIGNAL_VIA = process.env.BENCH_PARKED_SIGNAL_VIA || 'owner';
if (!['owner', 'callback'].includes(SIGNAL_VIA)) {
  console.error('BENCH_PARKED_SIGNAL_VIA must be owner or callback');
  process.exit(2);
}
const SUBMITTERS = Number(process.env.BENCH_PARKED_SUBMITTERS || 4);
const BACKLOG = Number(process.env.BENCH_PARKED_BACKLOG || 10_000);
const BASELINE_RUNS = Number(process.env.BENCH_PARKED_BASELINE_RUNS ?? 10_000);
const PARK_AFTER_S = Number(process.env.BENCH_PARK_AFTER_S ?? 1);
const SETTLE_S = Number(process.env.BENCH_PARKED_SETTLE_S ?? 60);
const IDLE_SETTLE_S = Number(process.env.BENCH_PARKED_IDLE_SETTLE_S ?? 40);
const MAX_SECONDS = Number(process.env.BENCH_MAX_SECONDS || 1800);
const BATCH = 1000;

const PARKED = {
  query_schema: { type: 'object' },
  steps: [
    { id: 'reply', kind: 'wait', for: 'signal' },
    { id: 'after', kind: 'transform', expression: 'steps.reply.output' },
  ],
  output: 'steps.after.output',
};
const NO_WAIT = {
  query_schema: { type: 'object' },
  steps: [{ id: 'after', kind: 'transform', expression: 'input' }],
  output: 'steps.after.output',
};

/**
 * CPU seconds of each group of processes: the service and every process under it now; PostgreSQL's
 * postmaster with its children, the exited ones included (backends of closed connections).
 */
function cpuOf(roots) {
  return Object.fromEntries(
    Object.entries(roots)
      .filter(([, pid]) => pid)
      .map(([name, pid]) => [
        name,
        name === 'postgres'
          ? cpuSeconds(pid, { children: true })
          : processTree(pid).reduce((sum, p) => sum + cpuSeconds(p), 0),
      ]),
  );
}

async function main() {
  const fixtures = await startFixtures('parked', { circuits: { parked: PARKED, nowait: NO_WAIT } });
  const db = new Pool({ connectionString: fixtures.db.url, max: 4 });
  const one = async (sql, params) => (await db.query(sql, params)).rows[0];
  let service;
  try {
    const hello = await helloBaseline({ seconds: 5, connections: 50 });
    service = await spawnService(
      DEFAULT_SHAPE.script,
      { ...fixtures.env, RUN_PARK_AFTER_S: String(PARK_AFTER_S) },
      { nodeArgs: DEFAULT_SHAPE.nodeArgs },
    );
    const roots = { service: service.child.pid, postgres: postmasterPid(fixtures.dir) };
    const auth = { authorization: `Bearer ${fixtures.token}` };
    const api = `${service.url}/api/v1`;
    const request = jsonClient(SIGNALERS + 10);
    const t0 = performance.now();
    const deadline = t0 + MAX_SECONDS * 1000;
    const since = (start) => +((performance.now() - start) / 1000).toFixed(1);

    // Idle: the service ready, nothing submitted yet (a few seconds for its start-up work to end), then
    // once V8's memory reducer has had time to hand back what the start-up grew.
    await sleep(5000);
    const idleFresh = pssOf(roots);
    console.log(`  idle, 5 s after the start: ${JSON.stringify(idleFresh)}`);
    await sleep(Math.max(0, IDLE_SETTLE_S - 5) * 1000);
    const idle = pssOf(roots);
    console.log(`  idle, ${IDLE_SETTLE_S} s after the start: ${JSON.stringify(idle)}`);
    /** PSS every 5 s for `seconds`: the samples of the service (MB) and the last figures. */
    const settle = async (seconds) => {
      const samples = [];
      let last;
      for (let waited = 0; waited < seconds; waited += 5) {
        await sleep(Math.min(5, seconds - waited) * 1000);
        last = pssOf(roots);
        samples.push(last.service.pss_mb);
      }
      return { last: last ?? pssOf(roots), samples };
    };

    // Runs are created in batches of 1000.
    const batchUrl = (adaptor) => `${api}/circuit-adaptors/${adaptor}/batches`;
    const backlog = async () =>
      (await one(`SELECT count(*)::int AS n FROM circuit_runs WHERE state = 'PROVISIONED'`)).n;
    const submitBatches = async (adaptor, runs, paced = false) => {
      let left = runs;
      const errors = {};
      let created = 0;
      await Promise.all(
        Array.from({ length: SUBMITTERS }, async () => {
          while (left > 0 && performance.now() < deadline) {
            // Paced: a run's deadline (RUN_DEADLINE_SECONDS, 600) counts from its creation, queue included.
            if (paced && (await backlog()) >= BACKLOG) {
              await sleep(1000);
              continue;
            }
            if (left <= 0) break;
            const size = Math.min(BATCH, left);
            left -= size;
            const inputs = Array.from({ length: size }, () => ({}));
            const res = await request('POST', batchUrl(adaptor), { headers: auth, body: { inputs } }).catch(
              (error) => ({ status: error.code ?? 'error' }),
            );
            if (res.status === 200) created += res.body.payload.total;
            else errors[res.status] = (errors[res.status] ?? 0) + 1;
          }
        }),
      );
      return { created, errors };
    };
    // Ends observed on the run-state channel (NOTIFY circuit_run_state), so that no polling of the
    // database is counted in PostgreSQL's CPU per run; the counts are checked in the database after.
    const listener = new Client({ connectionString: fixtures.db.url });
    await listener.connect();
    const endings = new Map();
    let onEnd = () => {};
    listener.on('notification', (msg) => {
      const { uid, state } = JSON.parse(msg.payload);
      if (state === 'COMPLETED' || state === 'EXCEPTION') {
        endings.set(uid, state);
        onEnd();
      }
    });
    await listener.query('LISTEN circuit_run_state');
    /** Resolves the seconds since `from` once `ended()` holds, or NaN at the deadline. */
    const until = (ended, from) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => resolve(NaN), Math.max(0, deadline - performance.now()));
        onEnd = () => {
          if (!ended()) return;
          clearTimeout(timer);
          onEnd = () => {};
          resolve((performance.now() - from) / 1000);
        };
        onEnd();
      });
    const stateCounts = async (where, params) =>
      one(
        `SELECT count(*) FILTER (WHERE state = 'COMPLETED')::int AS completed,
                count(*) FILTER (WHERE state = 'EXCEPTION')::int AS exceptions
           FROM circuit_runs WHERE ${where}`,
        params,
      );

    // Baseline and warm-up: the transform alone, as many runs as will be signaled, created by batches; then
    // the service's PSS once it has settled, the memory of a process that has worked (V8's heap and the
    // allocator keep what a burst of work grew them to).
    let baseline = null;
    if (BASELINE_RUNS > 0) {
      const before = endings.size;
      const cpuBase0 = cpuOf(roots);
      const baseStart = performance.now();
      const made = await submitBatches(fixtures.adaptors.nowait, BASELINE_RUNS);
      const doneAt = await until(() => endings.size - before >= made.created, baseStart);
      const cpuBase1 = cpuOf(roots);
      const done = await stateCounts(
        `circuit_version_uid IN (SELECT uid FROM circuit_versions WHERE circuit_uid =
           (SELECT circuit_uid FROM circuit_adaptors WHERE uid = $1))`,
        [fixtures.adaptors.nowait],
      );
      baseline = {
        runs: BASELINE_RUNS,
        created: made.created,
        completed: done.completed,
        exceptions: done.exceptions,
        seconds: +doneAt.toFixed(2),
        runs_per_s: Math.round(done.completed / doneAt),
        cpu_ms_per_run: Object.fromEntries(
          Object.keys(cpuBase1).map((name) => [
            name,
            +(((cpuBase1[name] - cpuBase0[name]) * 1000) / Math.max(1, done.completed + done.exceptions)).toFixed(2),
          ]),
        ),
      };
    }
    const warm = (await settle(SETTLE_S)).last;
    console.log(`  warm (after the baseline runs and ${SETTLE_S} s): ${JSON.stringify(warm)}`);

    const creating = performance.now();
    const submitted = await submitBatches(fixtures.adaptors.parked, RUNS, true);
    const submitSeconds = since(creating);
    console.log(
      `  created ${submitted.created}/${RUNS} runs in ${submitSeconds} s (errors ${JSON.stringify(submitted.errors)})`,
    );

    // Until every run is parked.
    const parkCounts = () =>
      one(
        `SELECT count(*) FILTER (WHERE parked_at IS NOT NULL)::int AS parked,
                  count(*) FILTER (WHERE state = 'PROVISIONED')::int AS provisioned,
                  count(*) FILTER (WHERE state = 'EXCEPTION')::int AS exceptions
             FROM circuit_runs WHERE circuit_version_uid IN (
               SELECT uid FROM circuit_versions WHERE circuit_uid = (SELECT circuit_uid FROM circuit_adaptors WHERE uid = $1))`,
        [fixtures.adaptors.parked],
      );
    let counts = await parkCounts();
    let lastReport = performance.now();
    let peakDuringParking = pssOf(roots);
    while (counts.parked + counts.exceptions < submitted.created && performance.now() < deadline) {
      await sleep(2000);
      counts = await parkCounts();
      const now = pssOf(roots);
      if (now.service.pss_mb > peakDuringParking.service.pss_mb) peakDuringParking = now;
      if (performance.now() - lastReport > 15_000) {
        lastReport = performance.now();
        console.log(
          `  ${since(creating)} s: ${counts.parked} parked, ${counts.provisioned} PROVISIONED, ${counts.exceptions} EXCEPTION; service PSS ${now.service.pss_mb} MB`,
        );
      }
    }
    const parkedSeconds = since(creating);
    const { rows: failures } = await db.query(
      `SELECT error->>'code' AS code, count(*)::int AS n FROM circuit_runs WHERE state = 'EXCEPTION' GROUP BY 1`,
    );
    const allParked = pssOf(roots);
    console.log(`  ${counts.parked} parked after ${parkedSeconds} s: ${JSON.stringify(allParked)}`);
    const settling = await settle(SETTLE_S);
    const settled = settling.last;
    console.log(
      `  ${SETTLE_S} s later: ${JSON.stringify(settled)} (service every 5 s: ${settling.samples.join(', ')} MB)`,
    );
    const cpuParked0 = cpuOf(roots);
    const wall0 = performance.now();
    await sleep(10_000);
    const cpuParked1 = cpuOf(roots);
    const wall = (performance.now() - wall0) / 1000;
    const cpuWhileParked = Object.fromEntries(
      Object.keys(cpuParked1).map((name) => [name, +(((cpuParked1[name] - cpuParked0[name]) * 100) / wall).toFixed(1)]),
    );

    // Signal SIGNALS of them, SIGNALERS at once; until all of those are COMPLETED.
    const { rows } = await db.query(`SELECT uid FROM circuit_runs WHERE parked_at IS NOT NULL LIMIT $1`, [SIGNALS]);
    const uids = rows.map((r) => r.uid);
    // callback: each run's callback URL, as the service makes it (its secret is in DATA_DIR).
    const { createWaitUrls } = require(path.join(dist, 'runs', 'wait-urls.js'));
    const waitUrls = createWaitUrls(
      fs.readFileSync(path.join(fixtures.env.DATA_DIR, 'secret'), 'utf8').trim(),
      () => service.url,
    );
    const signal = (i) =>
      SIGNAL_VIA === 'callback'
        ? request('POST', waitUrls.url(uids[i], 'reply', 'signal'), { body: { n: i } })
        : request('POST', `${api}/circuit-runs/${uids[i]}/signals/reply`, { headers: auth, body: { data: { n: i } } });
    const accepted = SIGNAL_VIA === 'callback' ? 202 : 200;
    const cpuSignal0 = cpuOf(roots);
    const signalStart = performance.now();
    const signalTimes = [];
    const signalErrors = {};
    let next = 0;
    let sentAt = NaN;
    const sending = Promise.all(
      Array.from({ length: Math.min(SIGNALERS, uids.length) }, async () => {
        while (next < uids.length && performance.now() < deadline) {
          const i = next++;
          const started = performance.now();
          const res = await signal(i).catch((error) => ({ status: error.code ?? 'error' }));
          signalTimes.push(performance.now() - started);
          if (res.status !== accepted) signalErrors[res.status] = (signalErrors[res.status] ?? 0) + 1;
        }
      }),
    ).then(() => {
      sentAt = since(signalStart);
    });
    const endedAt = await until(() => uids.every((uid) => endings.has(uid)), signalStart);
    const cpuSignal1 = cpuOf(roots);
    await sending;
    const ended = await stateCounts('uid = ANY($1::uuid[])', [uids]);
    const wrong = await one(
      `SELECT count(*)::int AS n FROM circuit_runs
         WHERE uid = ANY($1::uuid[]) AND state = 'COMPLETED' AND NOT (result_blob -> 'output' ? 'n')`,
      [uids],
    );
    signalTimes.sort((a, b) => a - b);
    const signalSeconds = Number.isNaN(endedAt) ? since(signalStart) : endedAt;
    const afterSignals = pssOf(roots);

    await listener.end();

    const diff = (a, b) => +(a - b).toFixed(1);
    const signalCpuMs = Object.fromEntries(
      Object.keys(cpuSignal1).map((name) => [
        name,
        +(((cpuSignal1[name] - cpuSignal0[name]) * 1000) / Math.max(1, ended.completed + ended.exceptions)).toFixed(2),
      ]),
    );
    const result = {
      scenario: 'parked',
      shape: `default (main.js with the worker, no JOB_CONCURRENCY override), RUN_PARK_AFTER_S=${PARK_AFTER_S}`,
      cpus: os.cpus().length,
      hello_world_rps: hello.rps,
      runs: RUNS,
      created: submitted.created,
      create_errors: submitted.errors,
      create_seconds: submitSeconds,
      parked: counts.parked,
      not_parked_exceptions: counts.exceptions,
      not_parked_exception_codes: Object.fromEntries(failures.map((f) => [f.code, f.n])),
      all_parked_after_s: parkedSeconds,
      pss: {
        idle_fresh: idleFresh,
        idle,
        warm,
        peak_while_parking: peakDuringParking,
        all_parked: allParked,
        settled: settled,
        service_every_5_s_after_all_parked: settling.samples,
        after_signals: afterSignals,
      },
      pss_growth_mb: {
        service_all_parked: diff(allParked.service.pss_mb, idle.service.pss_mb),
        service_settled: diff(settled.service.pss_mb, idle.service.pss_mb),
        service_settled_over_fresh_idle: diff(settled.service.pss_mb, idleFresh.service.pss_mb),
        postgres_settled: settled.postgres ? diff(settled.postgres.pss_mb, idle.postgres.pss_mb) : null,
        total_settled: diff(settled.total_mb, idle.total_mb),
        service_settled_over_warm: diff(settled.service.pss_mb, warm.service.pss_mb),
        postgres_settled_over_warm: settled.postgres ? diff(settled.postgres.pss_mb, warm.postgres.pss_mb) : null,
      },
      cpu_percent_of_a_core_while_parked: cpuWhileParked,
      signals: uids.length,
      signal_via: SIGNAL_VIA === 'callback' ? 'callback URLs (no token)' : "the owner's REST endpoint",
      signalers: SIGNALERS,
      signal_errors: signalErrors,
      signals_sent_s: sentAt,
      signal_p50_ms: +pct(signalTimes, 50).toFixed(1),
      signal_p99_ms: +pct(signalTimes, 99).toFixed(1),
      signaled_completed: ended.completed,
      signaled_exceptions: ended.exceptions,
      completed_without_their_signal: wrong.n,
      time_limit_hit: Number.isNaN(endedAt) || counts.parked + counts.exceptions < submitted.created,
      signal_to_completed_s: +signalSeconds.toFixed(2),
      runs_per_s: Math.round(ended.completed / signalSeconds),
      cpu_ms_per_signaled_run: signalCpuMs,
      baseline_transform_alone: baseline,
    };
    console.log(JSON.stringify(result, null, 2));
    const say = (ok) => (ok ? 'met' : 'NOT met');
    const growth = result.pss_growth_mb;
    console.log(
      `${counts.parked} runs parked hold no memory (service PSS within 50 MB of idle): ${say(growth.service_settled <= 50 && counts.parked === RUNS)} — ` +
        `service ${idle.service.pss_mb} MB idle (${idleFresh.service.pss_mb} MB 5 s after the start), ${allParked.service.pss_mb} MB when all were parked (${growth.service_all_parked >= 0 ? '+' : ''}${growth.service_all_parked}), ` +
        `${settled.service.pss_mb} MB ${SETTLE_S} s later (${growth.service_settled >= 0 ? '+' : ''}${growth.service_settled}); ` +
        `PostgreSQL ${idle.postgres?.pss_mb} → ${settled.postgres?.pss_mb} MB; all processes ${idle.total_mb} → ${settled.total_mb} MB`,
    );
    const overWarm = growth.service_settled_over_warm;
    console.log(
      `… and within 50 MB of the same process warm (after the baseline runs): ${say(overWarm <= 50 && counts.parked === RUNS)} — ` +
        `service ${warm.service.pss_mb} MB warm, ${settled.service.pss_mb} MB with ${counts.parked} parked (${overWarm >= 0 ? '+' : ''}${overWarm}); ` +
        `PostgreSQL ${warm.postgres?.pss_mb} → ${settled.postgres?.pss_mb} MB`,
    );
    console.log(
      `≥ 250 runs/s from signal to COMPLETED: ${say(result.runs_per_s >= 250 && ended.completed === uids.length)} — ` +
        `${ended.completed}/${uids.length} completed in ${result.signal_to_completed_s} s = ${result.runs_per_s} runs/s (signals sent in ${sentAt} s, p50 ${result.signal_p50_ms} ms, p99 ${result.signal_p99_ms} ms); ` +
        (baseline ? `baseline, the transform alone by batches: ${baseline.runs_per_s} runs/s; ` : '') +
        `Express hello-world in the same run ${hello.rps} req/s; in all ${since(t0)} s`,
    );
  } finally {
    await stopProcess(service);
    await db.end();
    await fixtures.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
