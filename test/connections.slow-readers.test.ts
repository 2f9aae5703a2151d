import fs from 'node:fs';
import net from 'node:net';
import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import { makeWaitingRun } from './support/approval-factories';
import {
  makeRunnableCircuit,
  ServiceProcess,
  spawnServiceProcess,
  submitRun,
  waitForRun,
} from './support/run-factories';

jest.setTimeout(300_000);

/**
 * Issue #24 (slow readers): 150 anonymous SSE clients of a public run with a 4 MiB result that stop
 * reading took the process from 516 MB to 1.94 GB (9.5 MB each); paused plain GETs ~5 MB each. Now
 * events are written with back-pressure (slice by slice, one copy of a large event shared by all
 * its readers), so a paused reader costs a bounded buffer; after WRITE_STALL_MS without taking a
 * byte it is dropped. Measured on a separate API process (dist/src/main.js, RUN_WORKER=false):
 * its resident memory (/proc/<pid>/status VmRSS) with every reader paused, against before.
 * (A paused plain GET of the run, like the rest of a paused stream, costs the process nothing here:
 * loopback's socket buffers take the 4 MiB; what they cannot take waits in the process until
 * WRITE_STALL_MS drops the connection, src/http/write-stall.ts.)
 */
const RESULT_BYTES = 4 * 1024 * 1024;
const READERS = 150;
/**
 * The bound. Readers of a large ended run share one read of its row (src/runs/read-cache.ts: one
 * read in flight per run, and the rows kept a few seconds) and one copy of each event's text. Before:
 * 9.5 MB each, never released; before the shared read, 0.6–1.7 MiB each.
 */
const BOUND_PER_READER = 256 * 1024;
/** So that what is garbage is collected and the growth measured is what the readers hold. */
const HEAP_CAP = '--max-old-space-size=256';
const STALL_MS = 8_000;

let t: TestApp;
let api: ServiceProcess;
let uid: string;
let port: number;

beforeAll(async () => {
  // STEP_CPU_MS is not this test's subject, and the sandbox's limit is wall-clock time (isolated-vm's timeout):
  // making 4 MiB took 0.85-1.56 s on a loaded runner (load average 8), past the default 1 s.
  t = await startTestApp({ runMaxResultBytes: RESULT_BYTES, stepCpuMs: 10_000 });
  api = await spawnServiceProcess('api', t.databaseUrl, {
    NODE_OPTIONS: HEAP_CAP,
    STREAMS_PER_CLIENT: String(READERS * 2),
    WRITE_STALL_MS: String(STALL_MS),
  });
  port = Number(new URL(api.url!).port);
  const owner = await makeUser();
  const { adaptorUid } = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'pad', kind: 'transform', expression: `$pad("", ${RESULT_BYTES - 1024}, "x")` }],
    output: '1',
  });
  const submitted = await submitRun(t, owner.token, adaptorUid, { input: {}, is_public: true });
  expect(submitted.status).toBe(200);
  uid = submitted.body.payload.uid as string;
  expect((await waitForRun(t, uid, owner.token, 60_000)).state).toBe('COMPLETED');
});
afterAll(async () => {
  await api?.kill();
  await t?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function rssBytes(pid: number): number {
  return Number(/VmRSS:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
}

interface Paused {
  socket: net.Socket;
  received: number;
  closed: Promise<void>;
}

/** A raw HTTP client that reads until `signal` appears in what it got, then stops reading (never resumes). */
function pausedReader(path: string, signal: string, to = port): Promise<Paused> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: to });
    let text = '';
    const reader: Paused = { socket, received: 0, closed: new Promise((done) => socket.once('close', () => done())) };
    socket.on('error', () => {});
    socket.once('connect', () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`),
    );
    const onData = (chunk: Buffer) => {
      reader.received += chunk.length;
      text += chunk.toString('latin1');
      if (text.includes(signal)) {
        socket.off('data', onData);
        socket.pause();
        resolve(reader);
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`closed before "${signal}": ${text.slice(0, 300)}`)));
  });
}

/** The largest of a few samples a little apart (RSS moves while the allocator settles). */
async function settledRss(pid: number): Promise<number> {
  let peak = 0;
  for (let i = 0; i < 10; i++) {
    peak = Math.max(peak, rssBytes(pid));
    await sleep(100);
  }
  return peak;
}

test(`${READERS} paused anonymous SSE readers of a public run with a 4 MiB result cost a bounded buffer each, not a copy of the result`, async () => {
  const pid = api.proc.pid!;
  // Warm the paths (one full read of the stream), then take the baseline.
  const warm = await fetch(`${api.url}/api/v1/circuit-runs/${uid}/events`, {
    headers: { accept: 'text/event-stream' },
  });
  expect((await warm.text()).length).toBeGreaterThan(RESULT_BYTES - 1024);
  await sleep(500);
  const baseline = await settledRss(pid);

  // Each reader has the first bytes of the state event (the server has begun writing it), then stops reading.
  // All at once, as the attack did: they share one read of the run (see BOUND_PER_READER).
  const readers = await Promise.all(
    Array.from({ length: READERS }, () => pausedReader(`/api/v1/circuit-runs/${uid}/events`, 'event: state')),
  );
  const paused = await settledRss(pid);
  const perReader = (paused - baseline) / READERS;
  console.log(
    `slow readers: baseline ${(baseline / 2 ** 20).toFixed(0)} MiB, with ${READERS} paused ${(paused / 2 ** 20).toFixed(0)} MiB, ${(perReader / 1024).toFixed(0)} KiB each`,
  );
  expect(perReader).toBeLessThanOrEqual(BOUND_PER_READER);
  // None got the whole event: they are paused, not finished.
  for (const reader of readers) expect(reader.received).toBeLessThan(RESULT_BYTES);

  // What the process held for them is released when they go.
  for (const reader of readers) reader.socket.destroy();
  await Promise.all(readers.map((reader) => reader.closed));
  // And the server serves on.
  expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
});

test('60 paused plain GETs of the run with a 4 MiB result cost a bounded buffer each', async () => {
  const pid = api.proc.pid!;
  // Warm the path (one full read of the run), then take the baseline, as for the streams above.
  const warm = await fetch(`${api.url}/api/v1/circuit-runs/${uid}`);
  expect((await warm.text()).length).toBeGreaterThan(RESULT_BYTES - 1024);
  await sleep(500);
  const baseline = await settledRss(pid);
  const readers = await Promise.all(
    Array.from({ length: 60 }, () => pausedReader(`/api/v1/circuit-runs/${uid}`, 'HTTP/1.1 200')),
  );
  // The answer of the ended run is serialised once for all of them (src/graphql/run/run.access.ts
  // findRunToAnswer, the bytes kept beside the cached rows) and written paced from that one copy.
  const paused = await settledRss(pid);
  const perReader = (paused - baseline) / readers.length;
  console.log(
    `paused GETs: baseline ${(baseline / 2 ** 20).toFixed(0)} MiB, with 60 paused ${(paused / 2 ** 20).toFixed(0)} MiB, ${(perReader / 1024).toFixed(0)} KiB each`,
  );
  // Before: ~5 MB each; 3.7 MiB before the paced JSON writes; 223–457 KiB while each request still serialised the run itself.
  expect(perReader).toBeLessThanOrEqual(BOUND_PER_READER);
  for (const reader of readers) expect(reader.received).toBeLessThan(RESULT_BYTES);
  for (const reader of readers) reader.socket.destroy();
  await Promise.all(readers.map((reader) => reader.closed));
  expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
});

/**
 * The kernel's state of the server's end of a client's connection (/proc/net/tcp, tcp6): '01' while
 * established, another state (FIN_WAIT1 while its unsent bytes wait) or none at all once it is closed.
 */
function serverEndState(client: net.Socket): string | undefined {
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');
  const [server, own] = [hex(client.remotePort!), hex(client.localPort!)];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [, local, remote, state] = line.trim().split(/\s+/);
      if (local?.endsWith(`:${server}`) && remote?.endsWith(`:${own}`)) return state;
    }
  }
  return undefined;
}

/** Resolves once the server has closed its end of `reader`'s connection (checked every 100 ms). */
async function closedByServer(reader: Paused): Promise<void> {
  while (serverEndState(reader.socket) === '01') await sleep(100);
}

/** Reads what is left of a paused reader's connection to its end: all it received, in bytes. */
async function drain(reader: Paused): Promise<number> {
  reader.socket.on('data', (chunk: Buffer) => {
    reader.received += chunk.length;
  });
  reader.socket.resume();
  await reader.closed;
  return reader.received;
}

test('a reader paused past WRITE_STALL_MS is dropped: an event stream and a plain GET of the 4 MiB run', async () => {
  // A process of its own with a short stall limit. A paused reader is closed by the server once it has
  // taken nothing of what waits for it for WRITE_STALL_MS (src/http/write-stall.ts); the signal waited for
  // is the server's end of the connection leaving ESTABLISHED in the kernel's table, however long that takes.
  const stallMs = 1_000;
  const quick = await spawnServiceProcess('api', t.databaseUrl, { WRITE_STALL_MS: String(stallMs) });
  try {
    const to = Number(new URL(quick.url!).port);
    // Whole, the stream and the answer are each a little over 4 MiB: more than loopback's socket buffers
    // take from a reader that stops (about 3.7 MiB here), so something waits in the process for each.
    const whole = {
      stream: (
        await (
          await fetch(`${quick.url}/api/v1/circuit-runs/${uid}/events`, { headers: { accept: 'text/event-stream' } })
        ).text()
      ).length,
      answer: (await (await fetch(`${quick.url}/api/v1/circuit-runs/${uid}`)).text()).length,
    };
    const stream = await pausedReader(`/api/v1/circuit-runs/${uid}/events`, 'event: state', to);
    const get = await pausedReader(`/api/v1/circuit-runs/${uid}`, 'HTTP/1.1 200', to);
    await Promise.all([closedByServer(stream), closedByServer(get)]);
    // The proof of the drop is the server's own record of it, naming each reader's connection: what the reader
    // drains afterwards cannot prove it, as loopback's buffers may have taken the whole answer before the drop.
    const dropped = (reader: Paused) =>
      quick.output.some(
        (line) =>
          line.includes('dropped a reader that took nothing of its answer') &&
          line.includes(`"remotePort":${reader.socket.localPort}`),
      );
    for (const reader of [stream, get]) {
      for (let i = 0; i < 50 && !dropped(reader); i++) await sleep(100);
      expect(dropped(reader)).toBe(true);
    }
    // Read now, each gets at most the whole answer, then the end. A reader counts the raw bytes of the connection:
    // the status line, the headers and the chunks' framing besides the body (`whole` counts bodies), which is what
    // it gets when loopback's buffers took the whole answer before the drop.
    const framing = 16 * 1024;
    expect(await drain(stream)).toBeLessThanOrEqual(whole.stream + framing);
    expect(await drain(get)).toBeLessThanOrEqual(whole.answer + framing);
    // And the process serves on.
    expect((await fetch(`${quick.url}/healthz`)).status).toBe(200);
  } finally {
    await quick.kill();
  }
});

test('more streams than STREAMS_PER_CLIENT from one client: the extra one is 429 with the envelope', async () => {
  // Streams of a run that waits (on an approval), so that both stay open until the third asks: a stream of
  // the ended 4 MiB run closes once loopback's buffers have taken all of it, and a loaded runner once saw
  // that happen first (the third was then served).
  const { run: waiting } = await makeWaitingRun(await makeUser(), { isPublic: true });
  const limited = await spawnServiceProcess('api', t.databaseUrl, { STREAMS_PER_CLIENT: '2' });
  try {
    const open = await Promise.all(
      [0, 1].map(async () => {
        const controller = new AbortController();
        const res = await fetch(`${limited.url}/api/v1/circuit-runs/${waiting.uid}/events`, {
          headers: { accept: 'text/event-stream' },
          signal: controller.signal,
        });
        expect(res.status).toBe(200);
        // Read the first bytes, then leave it open (paused): it still counts.
        await res.body!.getReader().read();
        return controller;
      }),
    );
    const refused = await fetch(`${limited.url}/api/v1/circuit-runs/${waiting.uid}/events`, {
      headers: { accept: 'text/event-stream' },
    });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      error: { code: 'RateLimited', message: expect.stringContaining('at most 2 per client') },
    });
    const gql = await fetch(`${limited.url}/graphql/stream`, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'subscription ($uid: ID!) { circuitRunUpdated(uid: $uid) { state } }',
        variables: { uid: waiting.uid },
      }),
    });
    expect(gql.status).toBe(429);
    expect((await gql.json()).errors[0].extensions.code).toBe('RateLimited');
    for (const controller of open) controller.abort();
  } finally {
    await limited.kill();
  }
});
