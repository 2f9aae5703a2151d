import fs from 'node:fs';
import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import {
  makeRunnableCircuit,
  ServiceProcess,
  spawnServiceProcess,
  submitRun,
  waitForRun,
} from './support/run-factories';

jest.setTimeout(240_000);

/**
 * Issue #8: 24 concurrent anonymous GETs of a public run with a 120 MB result took the process to
 * 4.6 GB RSS. RUN_MAX_RESULT_BYTES (4 MiB by default) now bounds a result; this reads the largest
 * result it allows 24 times at once from a separate API process (dist/src/main.js, RUN_WORKER=false)
 * and samples that process's resident memory (/proc/<pid>/status VmRSS) during and after.
 *
 * The bound: while a response is made, the process holds about four copies of the result (the row
 * as PostgreSQL sent it, the parsed value, the JSON text of the response and its bytes on the
 * socket), so 24 concurrent reads may need up to 24 × 4 MiB × 4 = 384 MiB above what the process
 * held before. Growth must stay under that, over two rounds of 24 (the reads took 4.6 GB).
 * Measured on the shared 2-core machine: +210 MiB after one round, +240–255 MiB after two.
 */
const RESULT_BYTES = 4 * 1024 * 1024; // RUN_MAX_RESULT_BYTES' default, which the API process keeps
const READERS = 24;
const COPIES = 4;
const BOUND_BYTES = READERS * RESULT_BYTES * COPIES;

let t: TestApp;
let api: ServiceProcess;

beforeAll(async () => {
  // STEP_CPU_MS is not this test's subject, and the sandbox's limit is wall-clock time (isolated-vm's timeout):
  // making 4 MiB took 0.85-1.56 s on a loaded runner (load average 8), past the default 1 s.
  t = await startTestApp({ runMaxResultBytes: RESULT_BYTES, stepCpuMs: 10_000 });
  api = await spawnServiceProcess('api', t.databaseUrl);
});
afterAll(async () => {
  await api?.kill();
  await t.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function rssBytes(pid: number): number {
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1];
  return Number(kb) * 1024;
}

test(`${READERS} concurrent anonymous GETs of a public run with a ${RESULT_BYTES / 1024 / 1024} MiB result: complete, identical answers; memory stays bounded`, async () => {
  const owner = await makeUser();
  // The result_blob is {output: 1, steps: {pad: {kind, output, started_at, ended_at, credits}}}: the
  // padded string takes all of RUN_MAX_RESULT_BYTES but the ~130 bytes around it.
  const padLength = RESULT_BYTES - 1024;
  const { adaptorUid } = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'pad', kind: 'transform', expression: `$pad("", ${padLength}, "x")` }],
    output: '1',
  });
  const submitted = await submitRun(t, owner.token, adaptorUid, { input: {}, is_public: true });
  expect(submitted.status).toBe(200);
  const uid = submitted.body.payload.uid as string;
  const run = await waitForRun(t, uid, owner.token, 60_000);
  expect(run.state).toBe('COMPLETED');
  expect(Buffer.byteLength(JSON.stringify(run.result_blob))).toBeGreaterThan(RESULT_BYTES - 1024);
  expect(Buffer.byteLength(JSON.stringify(run.result_blob))).toBeLessThanOrEqual(RESULT_BYTES);

  const url = `${api.url}/api/v1/circuit-runs/${uid}`;
  const pid = api.proc.pid!;
  // Warm the API process's code paths with a small read, then take the baseline.
  expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
  expect((await fetch(`${api.url}/api/v1/circuit-runs/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
  await sleep(500);
  const baseline = rssBytes(pid);

  // Two rounds of 24 at once: the second shows the first left nothing behind that adds up.
  let peak = baseline;
  const bodies: string[] = [];
  for (let round = 0; round < 2; round++) {
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssBytes(pid));
    }, 10);
    try {
      bodies.push(
        ...(await Promise.all(
          Array.from({ length: READERS }, async () => {
            const res = await fetch(url); // anonymous
            expect(res.status).toBe(200);
            return res.text();
          }),
        )),
      );
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, rssBytes(pid));
    await sleep(1000);
  }
  const after = rssBytes(pid);

  // Complete and identical: every answer is the whole run, byte for byte the same.
  const first = bodies[0];
  for (const body of bodies) expect(body === first).toBe(true);
  const payload = JSON.parse(first).payload;
  expect(payload).toMatchObject({ uid, state: 'COMPLETED', is_public: true, result_blob: { output: 1 } });
  expect(payload.result_blob.steps.pad.output).toHaveLength(padLength);
  expect(payload.result_blob.steps.pad.output).toBe('x'.repeat(padLength));
  expect(payload.error).toBeUndefined();

  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  const report = `baseline ${mib(baseline)}, peak ${mib(peak)} (+${mib(peak - baseline)}), after ${mib(after)}; bound +${mib(BOUND_BYTES)}`;
  expect({ report, within: peak - baseline < BOUND_BYTES }).toEqual({ report, within: true });
  expect({ report, within: after - baseline < BOUND_BYTES }).toEqual({ report, within: true });
  // The process still answers.
  expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
});
