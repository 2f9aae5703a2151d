#!/usr/bin/env node
// Traces and a collector that is down ("a collector that is down never slows or fails a
// run"). `npm run bench otel-down`.
//
// The same service (the default shape: main.js with its run worker thread, as `npm start`) is started
// once per mode, on the same database, and measured the same way:
//   off      no OTEL_* variable: the SDK is never loaded;
//   down     OTEL_EXPORTER_OTLP_ENDPOINT names a loopback port where nothing listens (connections refused);
//   hanging  a collector in this process that accepts connections and never answers (exports time out);
//   live     a collector in this process that answers 200 and counts the spans it receives.
// Per mode: BENCH_WARMUP_RUNS (default 200) runs, then run latency (submit → COMPLETED, from the
// run-state channel LISTEN circuit_run_state, not polling) at BENCH_RATE runs/s (default 40) for
// BENCH_SECONDS (default 10), then throughput: BENCH_RUNS (default 1500) runs submitted by
// BENCH_INFLIGHT (default 64) concurrent clients, completions per second. BENCH_ROUNDS (default 1)
// repeats the modes in turn (off, down, hanging, live, off, …) so drift on a shared machine shows.
// The circuit is the harness's HELLO (template + transform: 1 run span + 2 step spans per run).
const crypto = require('node:crypto');
const http = require('node:http');
const os = require('node:os');
const { performance } = require('node:perf_hooks');
const { startFixtures, spawnService, stopProcess, sleep, pct, jsonClient, DEFAULT_SHAPE } = require('../lib/harness');

const RATE = Number(process.env.BENCH_RATE || 40);
const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const RUNS = Number(process.env.BENCH_RUNS || 1500);
const INFLIGHT = Number(process.env.BENCH_INFLIGHT || 64);
const WARMUP_RUNS = Number(process.env.BENCH_WARMUP_RUNS || 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 1);
const MODES = (process.env.BENCH_MODES || 'off,down,hanging,live').split(',');

/** A collector on loopback: `answer` false holds every request open (a collector that hangs). */
async function startCollector({ answer }) {
  const stats = { requests: 0, spans: 0 };
  const held = new Set();
  const server = http.createServer((req, res) => {
    stats.requests++;
    if (!answer) {
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString());
        for (const r of body.resourceSpans ?? [])
          for (const s of r.scopeSpans ?? []) stats.spans += (s.spans ?? []).length;
      } catch {
        /* not JSON: counted as a request only */
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    stats,
    async stop() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A loopback port where nothing listens: bound, then released. */
async function closedPort() {
  const server = http.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function main() {
  const fixtures = await startFixtures('otel-down');
  const { Client } = require('pg');
  const listener = new Client({ connectionString: fixtures.db.url });
  await listener.connect();
  const completedAt = new Map();
  const failed = new Set();
  let onComplete = () => {};
  listener.on('notification', (msg) => {
    const { uid, state } = JSON.parse(msg.payload);
    if (state === 'COMPLETED' || state === 'EXCEPTION') {
      completedAt.set(uid, performance.now());
      if (state === 'EXCEPTION') failed.add(uid);
      onComplete();
    }
  });
  await listener.query('LISTEN circuit_run_state');
  const headers = { authorization: `Bearer ${fixtures.token}`, 'content-type': 'application/json' };
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

  const measureMode = async (mode) => {
    let collector;
    const env = { ...fixtures.env };
    if (mode === 'down') env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${await closedPort()}`;
    if (mode === 'hanging' || mode === 'live') {
      collector = await startCollector({ answer: mode === 'live' });
      env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.url;
    }
    const service = await spawnService(DEFAULT_SHAPE.script, env, { nodeArgs: DEFAULT_SHAPE.nodeArgs });
    // A fresh agent per service: a pooled keep-alive socket to an earlier service on the same (reused) port would be reset.
    const request = jsonClient(INFLIGHT * 2);
    try {
      const url = `${service.url}/api/v1/circuit-adaptors/${fixtures.adaptorUid}/query`;
      const submittedAt = new Map();
      let seq = 0;
      let retries = 0;
      // Keys unique to this service start: a key of an earlier round would answer that round's run.
      const keyPrefix = crypto.randomUUID();
      const submit = async () => {
        const started = performance.now();
        const n = seq++;
        // A keep-alive socket the server closed as it was reused fails the request: tried again, safely (Idempotency-Key).
        const send = () =>
          request('POST', url, {
            headers: { ...headers, 'idempotency-key': `${keyPrefix}-${n}` },
            body: { input: { name: `n${n}` } },
          });
        const res = await send().catch((error) => {
          if (error.code !== 'ECONNRESET') throw error;
          retries++;
          return send();
        });
        if (res.status !== 200) throw new Error(`submit: ${res.status} ${JSON.stringify(res.body)}`);
        submittedAt.set(res.body.payload.uid, started);
        return res.body.payload.uid;
      };
      for (let warm = 0; warm < WARMUP_RUNS; warm += 100)
        await waitAll(await Promise.all(Array.from({ length: Math.min(100, WARMUP_RUNS - warm) }, submit)), 30_000);

      // Latency at a fixed arrival rate.
      const latencyUids = [];
      const pending = [];
      const t0 = performance.now();
      for (let i = 0; i < RATE * SECONDS; i++) {
        const wait = t0 + (i * 1000) / RATE - performance.now();
        if (wait > 0) await sleep(wait);
        pending.push(submit().then((uid) => latencyUids.push(uid)));
      }
      await Promise.all(pending);
      const latencyMissing = await waitAll(latencyUids, 30_000);
      const latencies = latencyUids
        .filter((u) => completedAt.has(u))
        .map((u) => completedAt.get(u) - submittedAt.get(u))
        .sort((a, b) => a - b);

      // Throughput: RUNS runs from INFLIGHT concurrent clients.
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
      const throughputMissing = await waitAll(uids, 120_000);
      const last = Math.max(...uids.filter((u) => completedAt.has(u)).map((u) => completedAt.get(u)));
      const seconds = (last - startedAt) / 1000;
      const all = [...latencyUids, ...uids];
      return {
        mode,
        latency: {
          rate_per_s: RATE,
          runs: latencyUids.length,
          missing: latencyMissing,
          p50_ms: +pct(latencies, 50).toFixed(1),
          p95_ms: +pct(latencies, 95).toFixed(1),
          p99_ms: +pct(latencies, 99).toFixed(1),
        },
        throughput: {
          runs: uids.length,
          missing: throughputMissing,
          seconds: +seconds.toFixed(2),
          runs_per_s: Math.round((uids.length - throughputMissing) / seconds),
        },
        exceptions: all.filter((u) => failed.has(u)).length,
        submit_retries: retries,
        collector: collector ? { ...collector.stats } : null,
      };
    } finally {
      await stopProcess(service);
      await collector?.stop();
    }
  };

  const results = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of MODES) {
        console.log(`  … round ${round + 1}/${ROUNDS}: ${mode}`);
        const load = os.loadavg()[0];
        const result = await measureMode(mode);
        // The 1-minute load average before and after: on a shared machine, what else was running.
        results.push({
          round: round + 1,
          ...result,
          loadavg_1m: { before: +load.toFixed(1), after: +os.loadavg()[0].toFixed(1) },
        });
        console.log(
          `    ${mode}: p50 ${result.latency.p50_ms} ms, p95 ${result.latency.p95_ms} ms, ${result.throughput.runs_per_s} runs/s, ${result.exceptions} exceptions` +
            (result.collector
              ? `, collector got ${result.collector.requests} requests / ${result.collector.spans} spans`
              : ''),
        );
      }
    }
  } finally {
    await listener.end().catch(() => {});
    await fixtures.stop();
  }
  console.log(
    JSON.stringify({ scenario: 'otel-down', cpus: os.cpus().length, node: process.version, results }, null, 2),
  );
  const summary = MODES.map((mode) => {
    const rows = results.filter((r) => r.mode === mode);
    const median = (xs) => {
      const sorted = [...xs].sort((a, b) => a - b);
      const mid = Math.floor(sorted.length / 2);
      return sorted.length % 2 ? sorted[mid] : +((sorted[mid - 1] + sorted[mid]) / 2).toFixed(1);
    };
    return {
      mode,
      p50_ms: median(rows.map((r) => r.latency.p50_ms)),
      p95_ms: median(rows.map((r) => r.latency.p95_ms)),
      runs_per_s: median(rows.map((r) => r.throughput.runs_per_s)),
      exceptions: rows.reduce((n, r) => n + r.exceptions, 0),
    };
  });
  console.log(`\nmedians over ${ROUNDS} round(s)\nmode      p50_ms  p95_ms  runs/s  exceptions`);
  for (const row of summary)
    console.log(
      `${row.mode.padEnd(9)} ${String(row.p50_ms).padStart(7)} ${String(row.p95_ms).padStart(7)} ${String(row.runs_per_s).padStart(7)} ${String(row.exceptions).padStart(11)}`,
    );
  const off = summary.find((r) => r.mode === 'off');
  if (off) {
    for (const row of summary.filter((r) => r.mode !== 'off')) {
      console.log(
        `${row.mode} vs off: p50 ${(row.p50_ms - off.p50_ms).toFixed(1)} ms, p95 ${(row.p95_ms - off.p95_ms).toFixed(1)} ms, throughput ${(((row.runs_per_s - off.runs_per_s) / off.runs_per_s) * 100).toFixed(0)}%`,
      );
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
