#!/usr/bin/env node
// Runs waiting at once: BENCH_INFLIGHT_RUNS (default 10000) runs of one `http` step whose
// loopback upstream answers after BENCH_STEP_SECONDS (default 60), in the default deployment (one
// main.js that serves the API and executes runs, as `npm start`: no JOB_CONCURRENCY override; the one
// submitting user's USER_MAX_CONCURRENT_RUNS raised to the run count, its share of the worker to 100 %).
// `npm run bench inflight`.
//
// All runs are submitted by BENCH_SUBMITTERS (default 100) concurrent clients; meanwhile and until
// every run is terminal, the service's RSS (VmRSS) is sampled every 200 ms and its /healthz asked every
// 50 ms. Terminal runs are counted with GET /users/circuit-runs?state=…&limit=1 every 2 s. Targets: all
// complete, RSS ≤ 1.5 GB, /healthz p99 ≤ 50 ms. Bounded: it stops after BENCH_MAX_SECONDS (default
// 2 × step + 300 s) and reports what it reached. Steps of 30 s or more need the step's `timeout_ms`
// ( the http default is 30 s): it is set when the definition schema has it, else a warning.
// The upstream and the service each hold one socket per waiting run: the open-files limit is checked.
const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const {
  dist,
  startFixtures,
  spawnService,
  stopProcess,
  sleep,
  jsonClient,
  pollHealth,
  watchRss,
  rssMb,
  fdLimit,
  startUpstream,
  DEFAULT_SHAPE,
} = require('../lib/harness');

const RUNS = Number(process.env.BENCH_INFLIGHT_RUNS || 10000);
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS || 60);
const SUBMITTERS = Number(process.env.BENCH_SUBMITTERS || 100);
const MAX_SECONDS = Number(process.env.BENCH_MAX_SECONDS || 2 * STEP_SECONDS + 300);

/** The http step's `timeout_ms` when this build's definition schema knows it, else none. */
function stepTimeout() {
  let known = false;
  try {
    known = JSON.stringify(require(path.join(dist, 'engine', 'definition-schema.js')).definitionJsonSchema()).includes(
      '"timeout_ms"',
    );
  } catch {
    /* an older or newer layout: assume not */
  }
  if (known) return { timeout_ms: Math.min(600_000, STEP_SECONDS * 1000 + 30_000) };
  if (STEP_SECONDS >= 30)
    console.warn(
      `WARNING: this build's http step has no timeout_ms; its 30 s default is shorter than BENCH_STEP_SECONDS=${STEP_SECONDS}, so the runs will end EXCEPTION`,
    );
  return {};
}

async function main() {
  const need = RUNS + 2000;
  const limit = fdLimit();
  if (limit.soft < need) {
    console.warn(
      `WARNING: open-files limit ${limit.soft} (hard ${limit.hard}) < ${need}: the service, which inherits it, may fail with EMFILE. ` +
        `Raise it in the shell first: ulimit -n ${Math.max(need, Math.min(limit.hard, 65536))}`,
    );
  }
  const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  if (high - low < need)
    console.warn(
      `WARNING: ${high - low + 1} ephemeral ports (net.ipv4.ip_local_port_range) for ${RUNS} connections to one upstream`,
    );

  const upstream = await startUpstream({ delayMs: STEP_SECONDS * 1000 });
  const fixtures = await startFixtures('inflight', {
    circuits: {
      wait: {
        query_schema: { type: 'object' },
        steps: [{ id: 'wait', kind: 'http', method: 'GET', url: `${upstream.url}/`, ...stepTimeout() }],
      },
    },
  });
  let service;
  try {
    service = await spawnService(
      DEFAULT_SHAPE.script,
      // One user submits every run: their USER_MAX_CONCURRENT_RUNS (default 1000) is raised to the run count and
      // their share of the worker (RUN_USER_INFLIGHT_SHARE_PERCENT, default 50) to all of it, as this measures one
      // worker's in-flight capacity, not the per-user limits (a run waiting on an http step holds its slot; wait
      // steps and approvals do not).
      {
        ...fixtures.env,
        HTTP_STEP_ALLOW_PRIVATE: 'true',
        USER_MAX_CONCURRENT_RUNS: String(RUNS),
        RUN_USER_INFLIGHT_SHARE_PERCENT: '100',
      },
      { nodeArgs: DEFAULT_SHAPE.nodeArgs },
    );
    const auth = { authorization: `Bearer ${fixtures.token}` };
    const request = jsonClient(SUBMITTERS + 10);
    const count = async (state) => {
      const res = await request('GET', `${service.url}/api/v1/users/circuit-runs?state=${state}&limit=1`, {
        headers: auth,
      }).catch(() => undefined);
      return res?.status === 200 ? res.body.meta.total_count : NaN;
    };
    const rssStart = rssMb(service.child.pid);
    const rss = watchRss(service.child.pid);
    const health = pollHealth(`${service.url}/healthz`, 50);
    health.phase('submitting');
    const t0 = performance.now();
    const deadline = t0 + MAX_SECONDS * 1000;
    const elapsed = () => +((performance.now() - t0) / 1000).toFixed(1);

    // Submit every run.
    let next = 0;
    let submitted = 0;
    const submitErrors = {};
    const queryUrl = `${service.url}/api/v1/circuit-adaptors/${fixtures.adaptors.wait}/query`;
    await Promise.all(
      Array.from({ length: Math.min(SUBMITTERS, RUNS) }, async () => {
        while (next < RUNS && performance.now() < deadline) {
          next++;
          const res = await request('POST', queryUrl, { headers: auth, body: { input: {} } }).catch((error) => ({
            status: error.code ?? 'error',
          }));
          if (res.status === 200) submitted++;
          else submitErrors[res.status] = (submitErrors[res.status] ?? 0) + 1;
        }
      }),
    );
    const submitSeconds = elapsed();
    health.phase('waiting');
    console.log(
      `  submitted ${submitted}/${RUNS} in ${submitSeconds} s (errors ${JSON.stringify(submitErrors)}); RSS ${rss.peek()} MB so far`,
    );

    // Wait until every submitted run is terminal, or the time limit.
    let completed = 0;
    let exceptions = 0;
    let lastReport = 0;
    let endedAt = NaN;
    while (performance.now() < deadline) {
      [completed, exceptions] = await Promise.all([count('COMPLETED'), count('EXCEPTION')]);
      if (completed + exceptions > 0) health.phase('ending');
      if (completed + exceptions >= submitted) {
        endedAt = elapsed();
        break;
      }
      if (elapsed() - lastReport >= 30) {
        lastReport = elapsed();
        const up = await upstream.stats();
        console.log(
          `  ${lastReport} s: ${completed} completed, ${exceptions} EXCEPTION, upstream holds ${up.inflight} (max ${up.max_inflight}), RSS max ${rss.peek()} MB`,
        );
      }
      await sleep(2000);
    }
    const totalSeconds = Number.isNaN(endedAt) ? elapsed() : endedAt;
    const healthz = await health.stop();
    const maxRss = rss.stop();
    const up = await upstream.stats();
    const codes = {};
    if (exceptions > 0) {
      const sample = await request('GET', `${service.url}/api/v1/users/circuit-runs?state=EXCEPTION&limit=100`, {
        headers: auth,
      }).catch(() => undefined);
      for (const run of sample?.body?.data ?? [])
        codes[run.error?.code ?? 'unknown'] = (codes[run.error?.code ?? 'unknown'] ?? 0) + 1;
    }
    const result = {
      scenario: 'inflight',
      shape: 'default (main.js with the worker, no JOB_CONCURRENCY override)',
      runs: RUNS,
      step_seconds: STEP_SECONDS,
      submitters: SUBMITTERS,
      time_limit_s: MAX_SECONDS,
      time_limit_hit: Number.isNaN(endedAt),
      submitted,
      submit_errors: submitErrors,
      submit_seconds: submitSeconds,
      completed,
      exceptions,
      exception_codes_of_100: codes,
      not_terminal: submitted - completed - exceptions,
      total_seconds: totalSeconds,
      rss_mb: { start: rssStart, max: maxRss },
      healthz,
      upstream_max_concurrent: up.max_inflight,
      open_files_limit: limit.soft,
    };
    console.log(JSON.stringify(result, null, 2));
    const say = (ok) => (ok ? 'met' : 'NOT met');
    console.log(
      `all ${RUNS} runs of a ${STEP_SECONDS} s http step complete: ${say(completed === RUNS)} — ${completed} completed, ${exceptions} EXCEPTION, ${result.not_terminal} not terminal after ${totalSeconds} s; upstream held ${up.max_inflight} at once`,
    );
    console.log(`RSS ≤ 1.5 GB: ${say(maxRss <= 1536)} — max ${maxRss} MB`);
    // /healthz answers within 50 ms while the runs wait; submitting 10,000 runs and their
    // ending together are reported beside it (the load generator shares the machine's 2 cores).
    const waiting = healthz.phases?.waiting ?? healthz;
    console.log(
      `/healthz p99 ≤ 50 ms while the runs wait: ${say(waiting.p99_ms <= 50 && healthz.errors === 0)} — p50 ${waiting.p50_ms} ms, p99 ${waiting.p99_ms} ms, max ${waiting.max_ms} ms of ${waiting.polls}; ` +
        Object.entries(healthz.phases ?? {})
          .filter(([name]) => name !== 'waiting')
          .map(([name, h]) => `${name}: p99 ${h.p99_ms} ms`)
          .join(', ') +
        `; ${healthz.errors} errors in all`,
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
