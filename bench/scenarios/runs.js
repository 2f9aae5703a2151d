#!/usr/bin/env node
// Runs: submit→COMPLETED latency at a fixed arrival rate, sustained runs/s with 1 and 2 worker
// processes, RSS after load, cancel latency, and /healthz under load and during hostile runs.
// `npm run bench runs` (builds dist/ first).
// Starts its own embedded PostgreSQL with the harness's fixtures (the README's example circuit, plus the
// 'hold' circuit and the hostile ones below), runs one API process (RUN_WORKER=false) plus N worker processes
// (dist/src/worker.js), and watches completions on the run-state channel (LISTEN circuit_run_state),
// so completion times are not blurred by polling.
// Step events are on (every run writes its step events to its event log); the report counts them.
// Then cancel: runs held in an http step that never answers are canceled once RUNNING; the time from
// the cancel request to the EXCEPTION notification (p50/p95).
// Last, hostile runs: a catastrophic JSONata regex and four nested {{#each}}, stopped by the
// sandbox, in one process that serves the API and executes runs, while ordinary runs keep arriving.
// /healthz is asked every 50 ms (from this process) during every phase; `healthz` reports each phase's
// p99 and slowest answer, `healthz_worst_ms` the slowest of all (within 1 s during hostile runs).
// Env: BENCH_RATE (default 50/s), BENCH_SECONDS (default 10), BENCH_RUNS (throughput batch, default 3000),
// BENCH_INFLIGHT (concurrent submissions in the throughput phase, default 64), JOB_CONCURRENCY (default 50),
// BENCH_CANCELS (default 100), BENCH_STALLS (rounds of hostile runs, default 3), BENCH_WARMUP_RUNS (default 200).
const http = require('node:http');
const os = require('node:os');
const { performance } = require('node:perf_hooks');

const RATE = Number(process.env.BENCH_RATE || 50);
const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const RUNS = Number(process.env.BENCH_RUNS || 3000);
const INFLIGHT = Number(process.env.BENCH_INFLIGHT || 64);
const JOB_CONCURRENCY = process.env.JOB_CONCURRENCY || '50';
const CANCELS = Number(process.env.BENCH_CANCELS || 100);
const STALLS = Number(process.env.BENCH_STALLS || 3);
const ORDINARY_RATE = 20;

const {
  pct,
  sleep,
  rssMb,
  startFixtures,
  pollHealth,
  spawnService: spawnProcess,
  stopProcess,
  jsonClient,
} = require('../lib/harness');

// Hostile runs: user logic that would stall a process for tens of seconds without the
// sandbox, which stops each at STEP_CPU_MS (default 1000) or STEP_MEMORY_MB.
const STALL_ATTACKS = {
  regex: {
    definition: {
      query_schema: { type: 'object' },
      steps: [{ id: 'rx', kind: 'transform', expression: '$match(input.s, /^(a+)+$/)' }],
    },
    input: { s: `${'a'.repeat(31)}!` },
  },
  each: {
    definition: {
      query_schema: { type: 'object' },
      steps: [
        {
          id: 'tpl',
          kind: 'template',
          template:
            '{{#each input.xs}}{{#each ../input.xs}}{{#each ../../input.xs}}{{#each ../../../input.xs}}abcdefgh{{/each}}{{/each}}{{/each}}{{/each}}',
        },
      ],
    },
    input: { xs: Array.from({ length: 100 }, (_, i) => i) },
  },
};

async function main() {
  // An http target that never answers: runs of the 'hold' circuit wait in their http step until canceled.
  const hanging = [];
  const target = http.createServer((req, res) => {
    hanging.push(res);
  });
  await new Promise((resolve) => target.listen(0, '127.0.0.1', resolve));
  const fixtures = await startFixtures('runs', {
    circuits: {
      hold: {
        query_schema: { type: 'object' },
        steps: [{ id: 'wait', kind: 'http', method: 'GET', url: `http://127.0.0.1:${target.address().port}/` }],
      },
      ...Object.fromEntries(Object.entries(STALL_ATTACKS).map(([name, attack]) => [name, attack.definition])),
    },
  });
  const processes = [];
  let listener;
  try {
    const env = { ...fixtures.env, JOB_CONCURRENCY, JOB_LOCK_LIFETIME_MS: '30000', HTTP_STEP_ALLOW_PRIVATE: 'true' };
    const api = await spawnProcess('main.js', { ...env, RUN_WORKER: 'false' });
    processes.push(api);
    const workers = [await spawnProcess('worker.js', env)];
    processes.push(...workers);

    // Completion times from the run-state channel.
    const { Client } = require('pg');
    listener = new Client({ connectionString: fixtures.db.url });
    await listener.connect();
    const submittedAt = new Map();
    const completedAt = new Map();
    const runningAt = new Map();
    const failed = new Set();
    let onComplete = () => {};
    listener.on('notification', (msg) => {
      const { uid, state } = JSON.parse(msg.payload);
      if (state === 'RUNNING') runningAt.set(uid, performance.now());
      if (state === 'COMPLETED' || state === 'EXCEPTION') {
        completedAt.set(uid, performance.now());
        if (state === 'EXCEPTION') failed.add(uid);
        onComplete();
      }
    });
    await listener.query('LISTEN circuit_run_state');
    const countEvents = async () =>
      (await listener.query('SELECT kind, count(*)::int AS n FROM circuit_run_events GROUP BY kind')).rows.reduce(
        (all, row) => ({ ...all, [row.kind]: row.n }),
        {},
      );

    const queryUrl = (base, adaptorUid) => `${base}/api/v1/circuit-adaptors/${adaptorUid}/query`;
    const url = queryUrl(api.url, fixtures.adaptorUid);
    const headers = { authorization: `Bearer ${fixtures.token}`, 'content-type': 'application/json' };
    let seq = 0;
    const request = jsonClient(INFLIGHT * 2);
    const submit = async (to = url, input = { name: `n${seq++}` }) => {
      const started = performance.now();
      const res = await request('POST', to, { headers, body: { input } });
      const body = res.body;
      if (res.status !== 200) throw new Error(`submit: ${res.status} ${JSON.stringify(body)}`);
      submittedAt.set(body.payload.uid, started);
      return body.payload.uid;
    };
    const waitAll = async (uids, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      while (uids.some((u) => !completedAt.has(u)) && Date.now() < deadline) {
        await new Promise((resolve) => {
          onComplete = resolve;
          setTimeout(resolve, 200);
        });
      }
      return uids.filter((u) => !completedAt.has(u)).length;
    };

    // Warm-up: BENCH_WARMUP_RUNS (default 200), in batches of 200.
    for (let warm = 0; warm < Number(process.env.BENCH_WARMUP_RUNS || 200); warm += 200) {
      await waitAll(await Promise.all(Array.from({ length: 200 }, () => submit())), 30_000);
    }

    // /healthz of the API process is asked every 50 ms during each phase; the worst answer is reported.
    const healthz = {};

    // 1. Latency at a fixed arrival rate (one worker).
    let health = pollHealth(`${api.url}/healthz`);
    const latencyUids = [];
    const pending = [];
    const t0 = performance.now();
    const total = RATE * SECONDS;
    for (let i = 0; i < total; i++) {
      const due = t0 + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      pending.push(submit().then((uid) => latencyUids.push(uid)));
    }
    await Promise.all(pending);
    const missing = await waitAll(latencyUids, 30_000);
    healthz.latency_load = await health.stop();
    const latencies = latencyUids
      .filter((u) => completedAt.has(u))
      .map((u) => completedAt.get(u) - submittedAt.get(u))
      .sort((a, b) => a - b);
    const result = {
      latency: {
        rate_per_s: RATE,
        seconds: SECONDS,
        runs: latencyUids.length,
        missing,
        p50_ms: +pct(latencies, 50).toFixed(1),
        p95_ms: +pct(latencies, 95).toFixed(1),
        p99_ms: +pct(latencies, 99).toFixed(1),
        max_ms: +latencies.at(-1).toFixed(1),
      },
      throughput: {},
      healthz,
    };

    // 2. Sustained runs/s: a batch submitted with INFLIGHT concurrent clients; completions per second.
    const throughput = async (label) => {
      const polling = pollHealth(`${api.url}/healthz`);
      const uids = [];
      const startedAt = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: INFLIGHT }, async () => {
          while (next < RUNS) {
            next++;
            uids.push(await submit());
          }
        }),
      );
      const submitSeconds = (performance.now() - startedAt) / 1000;
      const left = await waitAll(uids, 120_000);
      const last = Math.max(...uids.filter((u) => completedAt.has(u)).map((u) => completedAt.get(u)));
      const seconds = (last - startedAt) / 1000;
      healthz[`throughput_${label}`] = await polling.stop();
      result.throughput[label] = {
        runs: uids.length,
        missing: left,
        seconds: +seconds.toFixed(2),
        runs_per_s: Math.round((uids.length - left) / seconds),
        submits_per_s: Math.round(uids.length / submitSeconds),
      };
    };
    const rssBefore = { api: rssMb(api.child.pid), worker: rssMb(workers[0].child.pid) };
    await throughput('1_worker');
    result.rss_mb_1_worker = {
      before: rssBefore,
      after: { api: rssMb(api.child.pid), worker: rssMb(workers[0].child.pid) },
    };
    workers.push(await spawnProcess('worker.js', env));
    processes.push(workers[1]);
    await sleep(500);
    await throughput('2_workers');

    result.rss_mb_after_load = { api: rssMb(api.child.pid), workers: workers.map((w) => rssMb(w.child.pid)) };
    result.events_logged = await countEvents();

    // 3. Cancel → EXCEPTION: each run is canceled once RUNNING (its http step waiting); timed from the cancel request to the EXCEPTION notification.
    const cancelTimes = [];
    for (let i = 0; i < CANCELS; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(10, CANCELS - i) }, () => submit(queryUrl(api.url, fixtures.adaptors.hold), {})),
      );
      const deadline = Date.now() + 10_000;
      while (batch.some((u) => !runningAt.has(u)) && Date.now() < deadline) await sleep(5);
      await Promise.all(
        batch.map(async (uid) => {
          const started = performance.now();
          await request('POST', `${api.url}/api/v1/circuit-runs/${uid}/cancel`, { headers });
          await waitAll([uid], 10_000);
          if (completedAt.has(uid)) cancelTimes.push(completedAt.get(uid) - started);
        }),
      );
    }
    cancelTimes.sort((a, b) => a - b);
    result.cancel_to_exception = {
      runs: cancelTimes.length,
      p50_ms: +pct(cancelTimes, 50).toFixed(1),
      p95_ms: +pct(cancelTimes, 95).toFixed(1),
      max_ms: +(cancelTimes.at(-1) ?? NaN).toFixed(1),
    };
    result.exceptions_canceled = cancelTimes.length;
    for (const res of hanging) res.destroy();
    result.exceptions = failed.size - cancelTimes.length;

    // 4. Hostile runs: one process that serves the API and executes runs (RUN_WORKER=true,
    // the default deployment; the worker processes are stopped so that it takes every run). STALLS
    // rounds of the STALL_ATTACKS at once, each stopped by the sandbox at STEP_CPU_MS, while ordinary
    // runs arrive at ORDINARY_RATE/s and its /healthz is asked every 50 ms.
    for (const w of workers) await stopProcess(w);
    await stopProcess(api);
    const solo = await spawnProcess('main.js', env);
    processes.push(solo);
    await waitAll(
      await Promise.all(Array.from({ length: 20 }, () => submit(queryUrl(solo.url, fixtures.adaptorUid)))),
      30_000,
    );
    health = pollHealth(`${solo.url}/healthz`);
    const hostile = [];
    const ordinary = [];
    let attacking = true;
    const arrivals = (async () => {
      while (attacking) {
        ordinary.push(submit(queryUrl(solo.url, fixtures.adaptorUid)));
        await sleep(1000 / ORDINARY_RATE);
      }
    })();
    const stallStarted = performance.now();
    for (let round = 0; round < STALLS; round++) {
      const uids = await Promise.all(
        Object.entries(STALL_ATTACKS).map(([name, attack]) =>
          submit(queryUrl(solo.url, fixtures.adaptors[name]), attack.input),
        ),
      );
      await waitAll(uids, 60_000);
      hostile.push(...uids);
    }
    const stallSeconds = (performance.now() - stallStarted) / 1000;
    attacking = false;
    await arrivals;
    const ordinaryUids = await Promise.all(ordinary);
    const ordinaryMissing = await waitAll(ordinaryUids, 30_000);
    healthz.hostile_runs = await health.stop();
    const hostileTimes = hostile
      .filter((u) => completedAt.has(u))
      .map((u) => completedAt.get(u) - submittedAt.get(u))
      .sort((a, b) => a - b);
    const ordinaryTimes = ordinaryUids
      .filter((u) => completedAt.has(u))
      .map((u) => completedAt.get(u) - submittedAt.get(u))
      .sort((a, b) => a - b);
    result.hostile_runs = {
      attacks: Object.keys(STALL_ATTACKS),
      runs: hostile.length,
      seconds: +stallSeconds.toFixed(1),
      ended_exception: hostile.filter((u) => failed.has(u)).length,
      missing: hostile.filter((u) => !completedAt.has(u)).length,
      p50_ms: +pct(hostileTimes, 50).toFixed(1),
      max_ms: +(hostileTimes.at(-1) ?? NaN).toFixed(1),
      ordinary_meanwhile: {
        runs: ordinaryUids.length,
        missing: ordinaryMissing,
        exceptions: ordinaryUids.filter((u) => failed.has(u)).length,
        p50_ms: +pct(ordinaryTimes, 50).toFixed(1),
        p99_ms: +pct(ordinaryTimes, 99).toFixed(1),
        max_ms: +(ordinaryTimes.at(-1) ?? NaN).toFixed(1),
      },
    };
    result.healthz_worst_ms = Math.max(...Object.values(healthz).map((h) => h.max_ms));
    result.machine = { cpus: os.cpus().length, node: process.version };
    console.log(JSON.stringify(result, null, 2));
    const ok =
      result.latency.p50_ms < 50 &&
      result.latency.p99_ms < 250 &&
      Math.max(...Object.values(result.throughput).map((x) => x.runs_per_s)) >= 300;
    console.log(`targets (p50 < 50 ms, p99 < 250 ms, >= 300 runs/s): ${ok ? 'met' : 'NOT met'}`);
    const healthy =
      result.healthz.hostile_runs.max_ms < 1000 && Object.values(result.healthz).every((h) => h.errors === 0);
    console.log(
      `/healthz during hostile runs within 1 s: ${healthy ? 'met' : 'NOT met'} (worst ${result.healthz.hostile_runs.max_ms} ms; worst in any phase ${result.healthz_worst_ms} ms)`,
    );
  } finally {
    await listener?.end().catch(() => {});
    await Promise.all(processes.map(stopProcess));
    target.closeAllConnections();
    await new Promise((resolve) => target.close(resolve));
    await fixtures.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
