#!/usr/bin/env node
// Runs: submit→COMPLETED latency at a fixed arrival rate, sustained runs/s with 1 and 2 worker
// processes, and RSS after load. `npm run bench runs` (builds dist/ first).
// Starts its own embedded PostgreSQL in a temp dir, creates a user, circuit and version (DESIGN §4's
// example) with the dist commands, runs one API process (RUN_WORKER=false) plus N worker processes
// (dist/src/worker.js), and watches completions on the run-state channel (LISTEN circuit_run_state),
// so completion times are not blurred by polling.
// Step events are on (every run writes its step events to its event log); the report counts them.
// Then cancel: runs held in an http step that never answers are canceled once RUNNING; the time from
// the cancel request to the EXCEPTION notification (p50/p95).
// Env: BENCH_RATE (default 50/s), BENCH_SECONDS (default 10), BENCH_RUNS (throughput batch, default 3000),
// BENCH_INFLIGHT (concurrent submissions in the throughput phase, default 64), JOB_CONCURRENCY (default 50),
// BENCH_CANCELS (default 100).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');

const root = path.join(__dirname, '..', '..');
const dist = path.join(root, 'dist', 'src');
const RATE = Number(process.env.BENCH_RATE || 50);
const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const RUNS = Number(process.env.BENCH_RUNS || 3000);
const INFLIGHT = Number(process.env.BENCH_INFLIGHT || 64);
const JOB_CONCURRENCY = process.env.JOB_CONCURRENCY || '50';
const CANCELS = Number(process.env.BENCH_CANCELS || 100);

const { HELLO, pct, sleep, rssMb, spawnService: spawnProcess, stopProcess } = require('../lib/harness');

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'circuits-bench-runs-'));
  const { startEmbeddedDatabase } = require(path.join(dist, 'db', 'embedded.js'));
  const db = await startEmbeddedDatabase(path.join(dir, 'data'));
  const processes = [];
  let listener;
  try {
    // Fixtures through the same commands the service uses.
    require('reflect-metadata');
    const { createSequelize } = require(path.join(dist, 'db', 'sequelize.js'));
    const { migrate } = require(path.join(dist, 'db', 'migrate.js'));
    const { initModels, CircuitAdaptor } = require(path.join(dist, 'models', 'index.js'));
    const { createUser } = require(path.join(dist, 'commands', 'create-user.js'));
    const { createApiToken } = require(path.join(dist, 'commands', 'create-api-token.js'));
    const { createCircuit } = require(path.join(dist, 'commands', 'create-circuit.js'));
    const { publishVersion } = require(path.join(dist, 'commands', 'publish-version.js'));
    const sequelize = createSequelize(db.url, 4);
    initModels(sequelize);
    await migrate(sequelize);
    const user = await createUser({ username: 'bench', credits: 1_000_000_000 });
    const { token } = await createApiToken(user, 'bench');
    const circuit = await createCircuit(sequelize, user, { name: 'hello' });
    await publishVersion(sequelize, user, circuit, HELLO);
    const adaptor = await CircuitAdaptor.findOne({ where: { circuit_uid: circuit.uid } });
    // An http target that never answers: runs wait in their http step until canceled.
    const http = require('node:http');
    const hanging = [];
    const target = http.createServer((req, res) => { hanging.push(res); });
    await new Promise((resolve) => target.listen(0, '127.0.0.1', resolve));
    const holdCircuit = await createCircuit(sequelize, user, { name: 'hold' });
    await publishVersion(sequelize, user, holdCircuit, {
      query_schema: { type: 'object' },
      steps: [{ id: 'wait', kind: 'http', method: 'GET', url: `http://127.0.0.1:${target.address().port}/` }],
    });
    const holdAdaptor = await CircuitAdaptor.findOne({ where: { circuit_uid: holdCircuit.uid } });
    const countEvents = async () => (await sequelize.query("SELECT kind, count(*)::int AS n FROM circuit_run_events GROUP BY kind", { type: 'SELECT' }))
      .reduce((all, row) => ({ ...all, [row.kind]: row.n }), {});

    const env = { DATABASE_URL: db.url, DATA_DIR: path.join(dir, 'app'), JOB_CONCURRENCY, JOB_LOCK_LIFETIME_MS: '30000', HTTP_STEP_ALLOW_PRIVATE: 'true' };
    const api = await spawnProcess('main.js', { ...env, RUN_WORKER: 'false' });
    processes.push(api);
    const workers = [await spawnProcess('worker.js', env)];
    processes.push(...workers);

    // Completion times from the run-state channel.
    const { Client } = require('pg');
    listener = new Client({ connectionString: db.url });
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

    const url = `${api.url}/api/v1/circuit-adaptors/${adaptor.uid}/query`;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    let seq = 0;
    const submit = async (to = url) => {
      const started = performance.now();
      const res = await fetch(to, { method: 'POST', headers, body: JSON.stringify({ input: { name: `n${seq++}` } }) });
      const body = await res.json();
      if (res.status !== 200) throw new Error(`submit: ${res.status} ${JSON.stringify(body)}`);
      submittedAt.set(body.payload.uid, started);
      return body.payload.uid;
    };
    const waitAll = async (uids, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      while (uids.some((u) => !completedAt.has(u)) && Date.now() < deadline) {
        await new Promise((resolve) => { onComplete = resolve; setTimeout(resolve, 200); });
      }
      return uids.filter((u) => !completedAt.has(u)).length;
    };

    // Warm-up.
    await waitAll(await Promise.all(Array.from({ length: 200 }, () => submit())), 30_000);

    // 1. Latency at a fixed arrival rate (one worker).
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
    const latencies = latencyUids.filter((u) => completedAt.has(u)).map((u) => completedAt.get(u) - submittedAt.get(u)).sort((a, b) => a - b);
    const result = {
      latency: {
        rate_per_s: RATE, seconds: SECONDS, runs: latencyUids.length, missing,
        p50_ms: +pct(latencies, 50).toFixed(1), p95_ms: +pct(latencies, 95).toFixed(1), p99_ms: +pct(latencies, 99).toFixed(1), max_ms: +latencies.at(-1).toFixed(1),
      },
      throughput: {},
    };

    // 2. Sustained runs/s: a batch submitted with INFLIGHT concurrent clients; completions per second.
    const throughput = async (label) => {
      const uids = [];
      const startedAt = performance.now();
      let next = 0;
      await Promise.all(Array.from({ length: INFLIGHT }, async () => {
        while (next < RUNS) { next++; uids.push(await submit()); }
      }));
      const submitSeconds = (performance.now() - startedAt) / 1000;
      const left = await waitAll(uids, 120_000);
      const last = Math.max(...uids.filter((u) => completedAt.has(u)).map((u) => completedAt.get(u)));
      const seconds = (last - startedAt) / 1000;
      result.throughput[label] = { runs: uids.length, missing: left, seconds: +seconds.toFixed(2), runs_per_s: Math.round((uids.length - left) / seconds), submits_per_s: Math.round(uids.length / submitSeconds) };
    };
    const rssBefore = { api: rssMb(api.child.pid), worker: rssMb(workers[0].child.pid) };
    await throughput('1_worker');
    result.rss_mb_1_worker = { before: rssBefore, after: { api: rssMb(api.child.pid), worker: rssMb(workers[0].child.pid) } };
    workers.push(await spawnProcess('worker.js', env));
    processes.push(workers[1]);
    await sleep(500);
    await throughput('2_workers');

    result.rss_mb_after_load = { api: rssMb(api.child.pid), workers: workers.map((w) => rssMb(w.child.pid)) };
    result.events_logged = await countEvents();

    // 3. Cancel → EXCEPTION: each run is canceled once RUNNING (its http step waiting); timed from the cancel request to the EXCEPTION notification.
    const cancelTimes = [];
    for (let i = 0; i < CANCELS; i += 10) {
      const batch = await Promise.all(Array.from({ length: Math.min(10, CANCELS - i) }, () => submit(`${api.url}/api/v1/circuit-adaptors/${holdAdaptor.uid}/query`)));
      const deadline = Date.now() + 10_000;
      while (batch.some((u) => !runningAt.has(u)) && Date.now() < deadline) await sleep(5);
      await Promise.all(batch.map(async (uid) => {
        const started = performance.now();
        const res = await fetch(`${api.url}/api/v1/circuit-runs/${uid}/cancel`, { method: 'POST', headers });
        await res.json();
        await waitAll([uid], 10_000);
        if (completedAt.has(uid)) cancelTimes.push(completedAt.get(uid) - started);
      }));
    }
    cancelTimes.sort((a, b) => a - b);
    result.cancel_to_exception = { runs: cancelTimes.length, p50_ms: +pct(cancelTimes, 50).toFixed(1), p95_ms: +pct(cancelTimes, 95).toFixed(1), max_ms: +(cancelTimes.at(-1) ?? NaN).toFixed(1) };
    result.exceptions_canceled = cancelTimes.length;
    for (const res of hanging) res.destroy();
    target.close();
    await sequelize.close();
    result.exceptions = failed.size - cancelTimes.length;
    result.machine = { cpus: os.cpus().length, node: process.version };
    console.log(JSON.stringify(result, null, 2));
    const ok = result.latency.p50_ms < 50 && result.latency.p99_ms < 250 && Math.max(...Object.values(result.throughput).map((x) => x.runs_per_s)) >= 300;
    console.log(`targets (p50 < 50 ms, p99 < 250 ms, >= 300 runs/s): ${ok ? 'met' : 'NOT met'}`);
  } finally {
    await listener?.end().catch(() => {});
    await Promise.all(processes.map(stopProcess));
    await db.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => { console.error(error); process.exit(1); });
