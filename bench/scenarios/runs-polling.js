#!/usr/bin/env node
// Runs with clients that poll, as most REST clients do: BENCH_RUNS (default 1000) runs, BENCH_INFLIGHT
// (default 100) clients at a time, each submitting a run and polling GET /circuit-runs/{uid} with a
// back-off from 10 to 100 ms until it is terminal (sending If-None-Match when the service gives an ETag).
// One API process and one worker process. `npm run bench runs-polling`.
//
// Measured twice: "cold", right after the processes start (50 runs of warm-up), and "warm", after
// BENCH_WARMUP_RUNS (default 5000) more. V8 keeps optimising the service's code for the first
// ~10,000 requests at these rates (its optimising compiler was ~18 % of the API's CPU in the first
// 10 s, by `perf`), so the cold figure includes that one-time cost and the warm one is what a
// long-running service spends.
const os = require('node:os');
const { performance } = require('node:perf_hooks');
const { startFixtures, spawnService, stopProcess, sleep, pct, cpuSeconds, postmasterPid, jsonClient, helloBaseline } = require('../lib/harness');

const RUNS = Number(process.env.BENCH_RUNS || 1000);
const INFLIGHT = Number(process.env.BENCH_INFLIGHT || 100);
const WARMUP_RUNS = Number(process.env.BENCH_WARMUP_RUNS || 5000);

async function main() {
  const fixtures = await startFixtures('polling');
  const processes = [];
  try {
    // The machine's speed in this run (it varies by ±15 % between runs here): an Express hello-world.
    const hello = await helloBaseline({ seconds: 5, connections: 50 });
    const env = { ...fixtures.env, JOB_CONCURRENCY: process.env.JOB_CONCURRENCY || '50', JOB_LOCK_LIFETIME_MS: '30000' };
    const api = await spawnService('main.js', { ...env, RUN_WORKER: 'false' });
    processes.push(api, await spawnService('worker.js', env));
    const auth = { authorization: `Bearer ${fixtures.token}` };
    const queryUrl = `${api.url}/api/v1/circuit-adaptors/${fixtures.adaptorUid}/query`;
    let polls = 0;
    let notModified = 0;
    const latencies = [];
    const request = jsonClient(INFLIGHT);
    const oneRun = async (i) => {
      const started = performance.now();
      const { body: { payload } } = await request('POST', queryUrl, { headers: auth, body: { input: { name: `n${i}` } } });
      let delay = 10;
      let etag;
      for (;;) {
        await sleep(delay);
        delay = Math.min(100, delay * 2);
        const poll = await request('GET', `${api.url}/api/v1/circuit-runs/${payload.uid}`, { headers: etag ? { ...auth, 'if-none-match': etag } : auth });
        polls++;
        if (poll.status === 304) { notModified++; continue; }
        etag = poll.headers.etag ?? undefined;
        const run = poll.body.payload;
        if (run.state === 'COMPLETED' || run.state === 'EXCEPTION') break;
      }
      latencies.push(performance.now() - started);
    };
    let seq = 0;
    const closedLoop = async (runs) => {
      let left = runs;
      await Promise.all(Array.from({ length: Math.min(INFLIGHT, runs) }, async () => { while (left-- > 0) await oneRun(seq++); }));
    };
    // Where the CPU goes, per run: this load generator, the API, the worker and PostgreSQL.
    const pids = { client: process.pid, api: api.child.pid, worker: processes[1].child.pid, postgres: postmasterPid(fixtures.dir) };
    const cpuNow = () => Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid, { children: name === 'postgres' })]));
    const phase = async () => {
      polls = 0; notModified = 0; latencies.length = 0;
      const cpuBefore = cpuNow();
      const t0 = performance.now();
      await closedLoop(RUNS);
      const seconds = (performance.now() - t0) / 1000;
      const cpuAfter = cpuNow();
      latencies.sort((a, b) => a - b);
      return {
        runs: RUNS, seconds: +seconds.toFixed(2), runs_per_s: Math.round(RUNS / seconds), polls_per_s: Math.round(polls / seconds), not_modified: notModified,
        observed_p50_ms: +pct(latencies, 50).toFixed(1), observed_p95_ms: +pct(latencies, 95).toFixed(1),
        cpu_ms_per_run: Object.fromEntries(Object.keys(pids).map((name) => [name, +((cpuAfter[name] - cpuBefore[name]) * 1000 / RUNS).toFixed(2)])),
      };
    };
    await closedLoop(50);
    const cold = await phase();
    await closedLoop(WARMUP_RUNS);
    const warm = await phase();
    const result = { scenario: 'runs-polling', inflight: INFLIGHT, cpus: os.cpus().length, hello_world_rps: hello.rps, cold, warmup_runs: WARMUP_RUNS, warm };
    console.log(JSON.stringify(result, null, 2));
    const verdict = (phaseResult) => (phaseResult.runs_per_s >= 300 ? 'met' : 'NOT met');
    console.log(`target ≥ 300 runs/s with polling clients: cold ${cold.runs_per_s} runs/s (${verdict(cold)}), warm ${warm.runs_per_s} runs/s (${verdict(warm)}); Express hello-world in the same run ${hello.rps} req/s`);
  } finally {
    await Promise.all(processes.map(stopProcess));
    await fixtures.stop();
  }
}

main().catch((error) => { console.error(error); process.exit(1); });
