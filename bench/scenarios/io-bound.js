#!/usr/bin/env node
// I/O-bound runs: runs of one `http` step whose upstream answers after 1 s, in the
// default deployment (one main.js that serves the API and executes runs, as `npm start`: no
// JOB_CONCURRENCY override). Target ≥ 250 runs/s, i.e. bound by CPU, not by worker slots.
// `npm run bench io-bound`.
//
// The upstream is a loopback HTTP server in its own process (its CPU is reported apart from the
// client's) that answers every request after BENCH_STEP_MS; it counts the requests it holds at once.
// BENCH_CLIENTS (default 500) polling clients in a closed loop: each submits a run, waits BENCH_STEP_MS,
// then polls GET /circuit-runs/{uid} with a back-off from 25 to 500 ms (If-None-Match when there is an
// ETag) until the run is terminal. BENCH_WARMUP_RUNS (default 500) runs first, then BENCH_RUNS (default
// 5000) measured. Bounded: a client gives up on a run after 120 s, and the whole measurement stops
// after BENCH_MAX_SECONDS (default 900), reporting what it reached.
const os = require('node:os');
const { performance } = require('node:perf_hooks');
const {
  startFixtures,
  spawnService,
  stopProcess,
  sleep,
  pct,
  cpuSeconds,
  postmasterPid,
  jsonClient,
  helloBaseline,
  startUpstream,
  DEFAULT_SHAPE,
} = require('../lib/harness');

const RUNS = Number(process.env.BENCH_RUNS || 5000);
const CLIENTS = Number(process.env.BENCH_CLIENTS || 500);
const WARMUP_RUNS = Number(process.env.BENCH_WARMUP_RUNS || 500);
const STEP_MS = Number(process.env.BENCH_STEP_MS || 1000);
const MAX_SECONDS = Number(process.env.BENCH_MAX_SECONDS || 900);
const RUN_GIVE_UP_MS = 120_000;

async function main() {
  const upstream = await startUpstream({ delayMs: STEP_MS });
  const fixtures = await startFixtures('io-bound', {
    circuits: {
      io: {
        query_schema: { type: 'object' },
        steps: [{ id: 'call', kind: 'http', method: 'GET', url: `${upstream.url}/` }],
      },
    },
  });
  let service;
  try {
    const hello = await helloBaseline({ seconds: 5, connections: 50 });
    service = await spawnService(
      DEFAULT_SHAPE.script,
      { ...fixtures.env, HTTP_STEP_ALLOW_PRIVATE: 'true' },
      { nodeArgs: DEFAULT_SHAPE.nodeArgs },
    );
    const auth = { authorization: `Bearer ${fixtures.token}` };
    const queryUrl = `${service.url}/api/v1/circuit-adaptors/${fixtures.adaptors.io}/query`;
    const request = jsonClient(CLIENTS + 10);
    const stats = { completed: 0, exceptions: 0, gave_up: 0, submit_errors: 0, polls: 0, not_modified: 0, errors: {} };
    const latencies = [];
    let stopAt = Infinity;
    const oneRun = async () => {
      const started = performance.now();
      const submitted = await request('POST', queryUrl, { headers: auth, body: { input: {} } }).catch((error) => ({
        status: error.code ?? 'error',
      }));
      if (submitted.status !== 200) {
        stats.submit_errors++;
        await sleep(100);
        return;
      }
      const giveUpAt = Math.min(started + RUN_GIVE_UP_MS, stopAt);
      await sleep(STEP_MS);
      let delay = 25;
      let etag;
      for (;;) {
        if (performance.now() > giveUpAt) {
          stats.gave_up++;
          return;
        }
        const poll = await request('GET', `${service.url}/api/v1/circuit-runs/${submitted.body.payload.uid}`, {
          headers: etag ? { ...auth, 'if-none-match': etag } : auth,
        }).catch(() => ({ status: 0 }));
        stats.polls++;
        if (poll.status === 304) stats.not_modified++;
        else if (poll.status === 200) {
          etag = poll.headers.etag ?? undefined;
          const run = poll.body.payload;
          if (run.state === 'COMPLETED' || run.state === 'EXCEPTION') {
            if (run.state === 'COMPLETED') stats.completed++;
            else {
              stats.exceptions++;
              const code = run.error?.code ?? 'unknown';
              stats.errors[code] = (stats.errors[code] ?? 0) + 1;
            }
            latencies.push(performance.now() - started);
            return;
          }
        }
        await sleep(delay);
        delay = Math.min(500, delay * 2);
      }
    };
    const closedLoop = async (runs, seconds) => {
      let left = runs;
      let done = 0;
      stopAt = performance.now() + seconds * 1000;
      const progress = setInterval(() => console.log(`  … ${done}/${runs} runs ended or given up`), 15_000);
      await Promise.all(
        Array.from({ length: Math.min(CLIENTS, runs) }, async () => {
          while (left > 0 && performance.now() < stopAt) {
            left--;
            await oneRun();
            done++;
          }
        }),
      );
      clearInterval(progress);
      return runs - left;
    };
    const pids = {
      service: service.child.pid,
      postgres: postmasterPid(fixtures.dir),
      client: process.pid,
      upstream: upstream.pid,
    };
    const cpuNow = () =>
      Object.fromEntries(
        Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid, { children: name === 'postgres' })]),
      );

    await closedLoop(WARMUP_RUNS, MAX_SECONDS);
    for (const key of Object.keys(stats)) stats[key] = key === 'errors' ? {} : 0;
    await upstream.stats({ reset: true });
    const cpuBefore = cpuNow();
    const t0 = performance.now();
    const started = await closedLoop(RUNS, MAX_SECONDS);
    const seconds = (performance.now() - t0) / 1000;
    const cpuAfter = cpuNow();
    const up = await upstream.stats();
    latencies.sort((a, b) => a - b);
    const ended = stats.completed + stats.exceptions;
    const result = {
      scenario: 'io-bound',
      shape: 'default (main.js with the worker, no JOB_CONCURRENCY override)',
      clients: CLIENTS,
      step_ms: STEP_MS,
      cpus: os.cpus().length,
      hello_world_rps: hello.rps,
      warmup_runs: WARMUP_RUNS,
      runs: RUNS,
      started_runs: started,
      ...stats,
      time_limit_hit: started < RUNS || stats.gave_up > 0,
      seconds: +seconds.toFixed(2),
      runs_per_s: Math.round(stats.completed / seconds),
      p50_ms: +pct(latencies, 50).toFixed(1),
      p95_ms: +pct(latencies, 95).toFixed(1),
      max_ms: +(latencies.at(-1) ?? NaN).toFixed(1),
      polls_per_run: +(stats.polls / Math.max(1, ended)).toFixed(2),
      upstream_max_concurrent: up.max_inflight,
      cpu_ms_per_run: Object.fromEntries(
        Object.keys(pids).map((name) => [
          name,
          +(((cpuAfter[name] - cpuBefore[name]) * 1000) / Math.max(1, ended)).toFixed(2),
        ]),
      ),
    };
    console.log(JSON.stringify(result, null, 2));
    const met = result.runs_per_s >= 250 && stats.completed === RUNS;
    console.log(
      `target ≥ 250 runs/s of a 1 s http step: ${met ? 'met' : 'NOT met'} — ${result.runs_per_s} runs/s, ` +
        `${stats.completed}/${RUNS} completed, p50 ${result.p50_ms} ms, p95 ${result.p95_ms} ms, upstream held ${up.max_inflight} at once; Express hello-world in the same run ${hello.rps} req/s`,
    );
  } finally {
    await stopProcess(service);
    await upstream.stop();
    await fixtures.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
