#!/usr/bin/env node
// Runs with clients that poll, as most REST clients do: BENCH_RUNS (default 1000) runs, BENCH_INFLIGHT
// (default 100) clients at a time, each submitting a run and polling GET /circuit-runs/{uid} with a
// back-off from 10 to 100 ms until it is terminal (sending If-None-Match when the service gives an ETag).
// `npm run bench runs-polling`.
//
// BENCH_SHAPE: `split` (default) one API process (RUN_WORKER=false) and one worker process, with
// JOB_CONCURRENCY 50 unless set; `default` the default deployment, as `npm start`: one main.js that
// serves the API and executes runs, with no JOB_CONCURRENCY or lock override.
// BENCH_CIRCUIT: `hello` (default) the README's example, whose template and transform are answered
// outside the sandbox (src/engine/render.ts, expression.ts); `sandbox` one whose template ({{#if}},
// {{#each}}) and transform ($count, &) both go to the sandbox. Target ≥ 300 runs/s for each.
//
// Measured twice: "cold", right after the processes start (50 runs of warm-up), and "warm", after
// BENCH_WARMUP_RUNS (default 5000) more. V8 keeps optimising the service's code for the first
// ~10,000 requests at these rates (its optimising compiler was ~18 % of the API's CPU in the first
// 10 s, by `perf`), so the cold figure includes that one-time cost and the warm one is what a
// long-running service spends.
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
  DEFAULT_SHAPE,
  pssOf,
} = require('../lib/harness');

const RUNS = Number(process.env.BENCH_RUNS || 1000);
const INFLIGHT = Number(process.env.BENCH_INFLIGHT || 100);
const WARMUP_RUNS = Number(process.env.BENCH_WARMUP_RUNS || 5000);
const SHAPE = process.env.BENCH_SHAPE || 'split';
const CIRCUIT = process.env.BENCH_CIRCUIT || 'hello';
if (!['split', 'default'].includes(SHAPE) || !['hello', 'sandbox'].includes(CIRCUIT)) {
  console.error('BENCH_SHAPE must be split or default, BENCH_CIRCUIT hello or sandbox');
  process.exit(2);
}

/** A circuit whose template and transform both need the sandbox (neither a bare reference nor a bare $uppercase(path)). */
const SANDBOX_CIRCUIT = {
  query_schema: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      formal: { type: 'boolean' },
      tags: { type: 'array', items: { type: 'string' } },
    },
    required: ['name'],
  },
  steps: [
    {
      id: 'greet',
      kind: 'template',
      template: 'Hello {{#if input.formal}}dear {{/if}}{{input.name}}{{#each input.tags}} #{{this}}{{/each}}',
    },
    {
      id: 'shout',
      kind: 'transform',
      expression: '$uppercase(steps.greet.output) & " (" & $string($count(input.tags)) & " tags)"',
    },
  ],
  output: 'steps.shout.output',
};
const inputOf = (i) =>
  CIRCUIT === 'sandbox' ? { name: `n${i}`, formal: i % 2 === 0, tags: ['a', 'b', `t${i % 7}`] } : { name: `n${i}` };

async function main() {
  const fixtures = await startFixtures('polling', {
    circuits: CIRCUIT === 'sandbox' ? { sandbox: SANDBOX_CIRCUIT } : {},
  });
  const processes = [];
  try {
    // The machine's speed in this run (it varies by ±15 % between runs here): an Express hello-world.
    const hello = await helloBaseline({ seconds: 5, connections: 50 });
    let api;
    if (SHAPE === 'default') {
      api = await spawnService(DEFAULT_SHAPE.script, fixtures.env, { nodeArgs: DEFAULT_SHAPE.nodeArgs });
      processes.push(api);
    } else {
      const env = {
        ...fixtures.env,
        JOB_CONCURRENCY: process.env.JOB_CONCURRENCY || '50',
        JOB_LOCK_LIFETIME_MS: '30000',
      };
      api = await spawnService('main.js', { ...env, RUN_WORKER: 'false' });
      processes.push(api, await spawnService('worker.js', env));
    }
    const auth = { authorization: `Bearer ${fixtures.token}` };
    const queryUrl = `${api.url}/api/v1/circuit-adaptors/${CIRCUIT === 'sandbox' ? fixtures.adaptors.sandbox : fixtures.adaptorUid}/query`;
    let polls = 0;
    let notModified = 0;
    let exceptions = 0;
    let gaveUp = 0;
    const latencies = [];
    const request = jsonClient(INFLIGHT);
    const oneRun = async (i) => {
      const started = performance.now();
      const {
        body: { payload },
      } = await request('POST', queryUrl, { headers: auth, body: { input: inputOf(i) } });
      let delay = 10;
      let etag;
      for (;;) {
        if (performance.now() - started > 120_000) {
          gaveUp++;
          return;
        } // bounded: a client gives up on a run after 120 s
        await sleep(delay);
        delay = Math.min(100, delay * 2);
        const poll = await request('GET', `${api.url}/api/v1/circuit-runs/${payload.uid}`, {
          headers: etag ? { ...auth, 'if-none-match': etag } : auth,
        });
        polls++;
        if (poll.status === 304) {
          notModified++;
          continue;
        }
        etag = poll.headers.etag ?? undefined;
        const run = poll.body.payload;
        if (run.state === 'EXCEPTION') exceptions++;
        if (run.state === 'COMPLETED' || run.state === 'EXCEPTION') break;
      }
      latencies.push(performance.now() - started);
    };
    let seq = 0;
    const closedLoop = async (runs) => {
      let left = runs;
      await Promise.all(
        Array.from({ length: Math.min(INFLIGHT, runs) }, async () => {
          while (left-- > 0) await oneRun(seq++);
        }),
      );
    };
    // Where the CPU goes, per run: this load generator, the API, the worker (or the one service process) and PostgreSQL.
    const pids =
      SHAPE === 'default'
        ? { client: process.pid, service: api.child.pid, postgres: postmasterPid(fixtures.dir) }
        : {
            client: process.pid,
            api: api.child.pid,
            worker: processes[1].child.pid,
            postgres: postmasterPid(fixtures.dir),
          };
    const cpuNow = () =>
      Object.fromEntries(
        Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid, { children: name === 'postgres' })]),
      );
    const phase = async () => {
      polls = 0;
      notModified = 0;
      exceptions = 0;
      gaveUp = 0;
      latencies.length = 0;
      const cpuBefore = cpuNow();
      const t0 = performance.now();
      await closedLoop(RUNS);
      const seconds = (performance.now() - t0) / 1000;
      const cpuAfter = cpuNow();
      latencies.sort((a, b) => a - b);
      return {
        runs: RUNS,
        seconds: +seconds.toFixed(2),
        runs_per_s: Math.round(RUNS / seconds),
        polls_per_s: Math.round(polls / seconds),
        not_modified: notModified,
        exceptions,
        gave_up: gaveUp,
        observed_p50_ms: +pct(latencies, 50).toFixed(1),
        observed_p95_ms: +pct(latencies, 95).toFixed(1),
        cpu_ms_per_run: Object.fromEntries(
          Object.keys(pids).map((name) => [name, +(((cpuAfter[name] - cpuBefore[name]) * 1000) / RUNS).toFixed(2)]),
        ),
        // The memory this load left: each process of the service (and PostgreSQL's) as the phase ends.
        pss_after: pssOf(Object.fromEntries(Object.entries(pids).filter(([name]) => name !== 'client'))),
      };
    };
    await closedLoop(50);
    const cold = await phase();
    await closedLoop(WARMUP_RUNS);
    const warm = await phase();
    const result = {
      scenario: 'runs-polling',
      shape: SHAPE,
      circuit: CIRCUIT,
      inflight: INFLIGHT,
      cpus: os.cpus().length,
      hello_world_rps: hello.rps,
      cold,
      warmup_runs: WARMUP_RUNS,
      warm,
    };
    console.log(JSON.stringify(result, null, 2));
    const verdict = (phaseResult) =>
      phaseResult.runs_per_s >= 300 && !phaseResult.exceptions && !phaseResult.gave_up ? 'met' : 'NOT met';
    const servicePss = (phaseResult) =>
      Object.entries(phaseResult.pss_after)
        .filter(([name]) => name !== 'postgres' && name !== 'total_mb')
        .reduce((sum, [, group]) => sum + group.pss_mb, 0);
    console.log(
      `target ≥ 300 runs/s with polling clients (shape ${SHAPE}, circuit ${CIRCUIT}): cold ${cold.runs_per_s} runs/s (${verdict(cold)}), warm ${warm.runs_per_s} runs/s (${verdict(warm)}); Express hello-world in the same run ${hello.rps} req/s`,
    );
    console.log(
      `target service PSS after that load ≤ 500 MB: after the cold runs ${servicePss(cold).toFixed(1)} MB (${servicePss(cold) <= 500 ? 'met' : 'NOT met'}), after the warm ones ${servicePss(warm).toFixed(1)} MB (${servicePss(warm) <= 500 ? 'met' : 'NOT met'}); PostgreSQL ${cold.pss_after.postgres?.pss_mb ?? '-'} and ${warm.pss_after.postgres?.pss_mb ?? '-'} MB`,
    );
  } finally {
    await Promise.all(processes.map(stopProcess));
    await fixtures.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
