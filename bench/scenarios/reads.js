#!/usr/bin/env node
// Reads: authenticated GET /api/v1/circuit-runs/{uid} (REST bridge), the same read as GraphQL
// `circuitRun`, and a conditional GET answered 304, side by side with an Express hello-world measured in
// the same run. `npm run bench reads`. Env: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 50).
const os = require('node:os');
const {
  startFixtures,
  spawnService,
  stopProcess,
  measure,
  helloBaseline,
  sleep,
  postmasterPid,
} = require('../lib/harness');

const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 50);

async function main() {
  const fixtures = await startFixtures('reads');
  let api;
  try {
    api = await spawnService('main.js', fixtures.env);
    const auth = { authorization: `Bearer ${fixtures.token}` };
    const submitted = await fetch(`${api.url}/api/v1/circuit-adaptors/${fixtures.adaptorUid}/query`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ input: { name: 'Ada' } }),
    }).then((r) => r.json());
    const uid = submitted.payload.uid;
    let run;
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${api.url}/api/v1/circuit-runs/${uid}`, { headers: auth });
      run = await res.json();
      if (run.payload.state === 'COMPLETED') break;
      await sleep(50);
    }
    const etag = (await fetch(`${api.url}/api/v1/circuit-runs/${uid}`, { headers: auth })).headers.get('etag');

    const cpu = { service: api.child.pid, postgres: { pid: postmasterPid(fixtures.dir), children: true } };
    console.log(
      `${CONNECTIONS} connections, ${SECONDS} s each, ${os.cpus().length} cores (load generator on the same machine)`,
    );
    const rows = [];
    rows.push(await helloBaseline({ seconds: SECONDS, connections: CONNECTIONS }));
    rows.push(
      await measure({
        label: 'GET /circuit-runs/{uid} (REST)',
        url: `${api.url}/api/v1/circuit-runs/${uid}`,
        headers: auth,
        seconds: SECONDS,
        connections: CONNECTIONS,
        cpu,
      }),
    );
    if (etag) {
      rows.push(
        await measure({
          label: 'GET /circuit-runs/{uid} If-None-Match → 304',
          url: `${api.url}/api/v1/circuit-runs/${uid}`,
          headers: { ...auth, 'if-none-match': etag },
          seconds: SECONDS,
          connections: CONNECTIONS,
          cpu,
        }),
      );
    }
    rows.push(
      await measure({
        label: 'POST /graphql circuitRun',
        url: `${api.url}/graphql`,
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({
          query: 'query($uid: ID!) { circuitRun(uid: $uid) { uid state createdAt endedAt resultBlob } }',
          variables: { uid },
        }),
        seconds: SECONDS,
        connections: CONNECTIONS,
        cpu,
      }),
    );
    const baseline = rows[0].rps;
    const rest = rows[1];
    // The 3,000 req/s was 0.3 × the hello-world of its machine: both are printed, this machine's speed varies.
    const verdict = (ok) => (ok ? 'met' : 'NOT met');
    console.log(
      `REST GET: ${rest.rps} req/s = ${(rest.rps / baseline).toFixed(2)} × hello-world; ` +
        `≥ 0.3 × hello-world: ${verdict(rest.rps >= 0.3 * baseline)}; ≥ 3,000 req/s: ${verdict(rest.rps >= 3000)}; p99 ≤ 50 ms: ${verdict(rest.p99_ms <= 50)}`,
    );
    console.log(JSON.stringify({ scenario: 'reads', connections: CONNECTIONS, seconds: SECONDS, results: rows }));
  } finally {
    await stopProcess(api);
    await fixtures.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
