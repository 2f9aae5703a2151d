#!/usr/bin/env node
// Webhooks: delivery latency after COMPLETED. `npm run bench webhooks` (builds dist/ first).
// A fresh embedded PostgreSQL with the README's example circuit, one API process (RUN_WORKER=false) and one
// worker; batches of BENCH_WEBHOOK_RUNS (default 100) runs submitted at once, each with a webhook to a
// local receiver that checks every signature with the standardwebhooks package. Latency: from the run's
// COMPLETED notification (LISTEN circuit_run_state, sent in the statement that ends the run) to the
// receiver having the whole signed request. Env: BENCH_WEBHOOK_RUNS, BENCH_BATCHES (default 3),
// JOB_CONCURRENCY (default 50).
const http = require('node:http');
const { performance } = require('node:perf_hooks');
const { Webhook } = require('standardwebhooks');
const { pct, sleep, rssMb, startFixtures, spawnService, stopProcess } = require('../lib/harness');

const RUNS = Number(process.env.BENCH_WEBHOOK_RUNS || 100);
const BATCHES = Number(process.env.BENCH_BATCHES || 3);
const JOB_CONCURRENCY = process.env.JOB_CONCURRENCY || '50';

async function main() {
  const fixtures = await startFixtures('webhooks');
  const processes = [];
  let listener;
  let receiver;
  try {
    const env = { ...fixtures.env, JOB_CONCURRENCY, JOB_LOCK_LIFETIME_MS: '30000', HTTP_STEP_ALLOW_PRIVATE: 'true' };
    const api = await spawnService('main.js', { ...env, RUN_WORKER: 'false' });
    processes.push(api);
    processes.push(await spawnService('worker.js', env));
    const headers = { authorization: `Bearer ${fixtures.token}`, 'content-type': 'application/json' };
    const secret = (await (await fetch(`${api.url}/api/v1/webhooks/default/secret`, { headers })).json()).payload.key;
    const verifier = new Webhook(secret);

    const completedAt = new Map();
    const deliveredAt = new Map();
    let badSignatures = 0;
    let wake = () => {};
    receiver = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const at = performance.now();
        try {
          const message = verifier.verify(Buffer.concat(chunks).toString(), req.headers);
          if (!deliveredAt.has(message.data.uid)) deliveredAt.set(message.data.uid, at);
        } catch {
          badSignatures++;
        }
        res.writeHead(204).end();
        wake();
      });
    });
    await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${receiver.address().port}/hook`;

    const { Client } = require('pg');
    listener = new Client({ connectionString: fixtures.db.url });
    await listener.connect();
    listener.on('notification', (msg) => {
      const { uid, state } = JSON.parse(msg.payload);
      if (state === 'COMPLETED' && !completedAt.has(uid)) completedAt.set(uid, performance.now());
    });
    await listener.query('LISTEN circuit_run_state');

    const url = `${api.url}/api/v1/circuit-adaptors/${fixtures.adaptorUid}/query`;
    const latencies = [];
    let seq = 0;
    for (let batch = 0; batch <= BATCHES; batch++) {
      // Batch 0 warms up (schema built in the worker, connections opened) and is not counted.
      const uids = await Promise.all(
        Array.from({ length: RUNS }, async () => {
          const res = await fetch(url, {
            method: 'POST',
            headers,
            body: JSON.stringify({ input: { name: `n${seq++}` }, webhook: hook }),
          });
          const body = await res.json();
          if (res.status !== 200) throw new Error(`submit: ${res.status} ${JSON.stringify(body)}`);
          return body.payload.uid;
        }),
      );
      const deadline = Date.now() + 60_000;
      while (uids.some((uid) => !deliveredAt.has(uid)) && Date.now() < deadline)
        await new Promise((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
      const missing = uids.filter((uid) => !deliveredAt.has(uid) || !completedAt.has(uid));
      if (missing.length)
        throw new Error(`${missing.length} of ${RUNS} runs were not completed and delivered within 60 s`);
      if (batch > 0) for (const uid of uids) latencies.push(deliveredAt.get(uid) - completedAt.get(uid));
      await sleep(200);
    }
    latencies.sort((a, b) => a - b);
    const f = (ms) => ms.toFixed(1);
    console.log(
      `webhook delivery after COMPLETED, ${BATCHES} batches of ${RUNS} concurrent runs (${latencies.length} deliveries, 1 worker, JOB_CONCURRENCY=${JOB_CONCURRENCY}):`,
    );
    console.log(
      `  p50 ${f(pct(latencies, 50))} ms  p95 ${f(pct(latencies, 95))} ms  p99 ${f(pct(latencies, 99))} ms  max ${f(latencies[latencies.length - 1])} ms  bad signatures ${badSignatures}`,
    );
    console.log(`  RSS after: api ${rssMb(api.child.pid)} MB, worker ${rssMb(processes[1].child.pid)} MB`);
    if (badSignatures) process.exitCode = 1;
  } finally {
    await listener?.end().catch(() => {});
    receiver?.close();
    for (const p of processes.reverse()) await stopProcess(p);
    await fixtures.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
