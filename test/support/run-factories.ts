import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { TestApp } from './app';
import type { TestUser } from './factories';
import { makeCircuit } from './factories';
import type { CircuitDefinition } from '../../src/domain/definition';
import type { CreateCircuitInput } from '../../src/commands/create-circuit';
import { CircuitAdaptor } from '../../src/models';

export const TERMINAL = ['COMPLETED', 'EXCEPTION'];

/** A circuit with one published version of `definition`, plus its adaptor uid. */
export async function makeRunnableCircuit(
  owner: TestUser,
  definition: CircuitDefinition,
  input: Partial<CreateCircuitInput> = {},
) {
  const { circuit, version } = await makeCircuit(owner, input, definition);
  const adaptor = await CircuitAdaptor.findOne({ where: { circuit_uid: circuit.uid } });
  return { circuit, version: version!, adaptorUid: adaptor!.uid };
}

/** POST /circuit-adaptors/{adaptor}/query */
export function submitRun(
  t: TestApp,
  token: string | undefined,
  adaptorUid: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return t.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, { token, body, headers });
}

/** Polls GET /circuit-runs/{uid} until the run is terminal (or the timeout passes). */
export async function waitForRun(
  t: Pick<TestApp, 'rest'>,
  uid: string,
  token?: string,
  timeoutMs = 15_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.rest('GET', `/circuit-runs/${uid}`, { token });
    if (res.status !== 200) throw new Error(`GET run ${uid}: ${res.status} ${JSON.stringify(res.body)}`);
    if (TERMINAL.includes(res.body.payload.state)) return res.body.payload;
    if (Date.now() > deadline) throw new Error(`run ${uid} still ${res.body.payload.state} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
}

/** Reads a text/event-stream response to its end (or timeout), returning its events and comments. */
export async function readSse(
  url: string,
  options: {
    token?: string;
    headers?: Record<string, string>;
    timeoutMs?: number;
    onOpen?: () => void;
    method?: string;
    body?: unknown;
  } = {},
) {
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 15_000);
  try {
    const res = await fetch(url, {
      method: options.method ?? 'GET',
      headers,
      signal: controller.signal,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const contentType = res.headers.get('content-type') ?? '';
    if (!contentType.startsWith('text/event-stream')) {
      const text = await res.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* text */
      }
      return { status: res.status, headers: res.headers, events: [] as SseEvent[], body, raw: text };
    }
    options.onOpen?.();
    const raw = await res.text();
    const events: SseEvent[] = [];
    for (const block of raw.split('\n\n')) {
      const event: SseEvent = {};
      let has = false;
      for (const line of block.split('\n')) {
        const match = /^(id|event|data): ?(.*)$/.exec(line);
        if (match) {
          has = true;
          const key = match[1] as keyof SseEvent;
          event[key] = key === 'data' && event.data !== undefined ? `${event.data}\n${match[2]}` : match[2];
        }
      }
      if (has && (event.data !== undefined || event.event)) events.push(event);
    }
    return { status: res.status, headers: res.headers, events, body: undefined, raw };
  } finally {
    clearTimeout(timer);
  }
}

/** A loopback HTTP server for http steps; `handler` decides each response. */
export async function startHttpTarget(handler: http.RequestListener): Promise<{
  url: string;
  requests: { method: string; url: string; body: string; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}> {
  const requests: { method: string; url: string; body: string; headers: http.IncomingHttpHeaders }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        body: Buffer.concat(chunks).toString(),
        headers: req.headers,
      });
      handler(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * An http-step target that holds every request to `/hold…` open (a run waiting in its step) until
 * `release` answers them, and answers any other request `{"ok":true}` at once.
 */
export async function startHoldingTarget() {
  const held: http.ServerResponse[] = [];
  const target = await startHttpTarget((req, res) => {
    if (req.url?.startsWith('/hold')) held.push(res);
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  const release = (body = '{"released":true}') => {
    for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  };
  return {
    url: target.url,
    /** Requests held so far and not yet released, oldest first. */
    held,
    /** A definition whose one step waits at the target. */
    holdDefinition: (): CircuitDefinition => ({
      query_schema: { type: 'object' },
      steps: [{ id: 'wait', kind: 'http', method: 'GET', url: `${target.url}/hold` }],
    }),
    release,
    /** Waits until `count` requests are held (10 s at most). */
    async untilHeld(count = 1) {
      const deadline = Date.now() + 10_000;
      while (held.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(held.length).toBeGreaterThanOrEqual(count);
    },
    async close() {
      release();
      await target.close();
    },
  };
}

export interface ServiceProcess {
  proc: ChildProcess;
  /** The HTTP base URL (API processes only). */
  url?: string;
  output: string[];
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Spawns the built service (`dist/src/main.js`) or worker (`dist/src/worker.js`) on `databaseUrl`
 * and resolves once it logs that it is ready. `npm test` builds dist first; built here if missing.
 */
export async function spawnServiceProcess(
  kind: 'api' | 'worker',
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  const root = path.resolve(__dirname, '../..');
  const script = path.join(root, 'dist/src', kind === 'api' ? 'main.js' : 'worker.js');
  if (!fs.existsSync(script)) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'circuits-proc-'));
  const baseEnv = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !['REDIS_URL', 'MONGODB_URL', 'PORT', 'RUN_WORKER'].includes(k)),
  );
  const proc = spawn(process.execPath, [script], {
    cwd: root,
    env: {
      ...baseEnv,
      DATABASE_URL: databaseUrl,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      SECRET_KEY: 'test-secret',
      HTTP_STEP_ALLOW_PRIVATE: 'true',
      JOB_LOCK_LIFETIME_MS: '2000',
      ...(kind === 'api' ? { RUN_WORKER: 'false' } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      fs.rmSync(dataDir, { recursive: true, force: true });
      resolve(code);
    }),
  );
  const ready = new Promise<string | undefined>((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        output.push(line);
        try {
          const entry = JSON.parse(line) as { msg?: string; url?: string };
          if (entry.msg === (kind === 'api' ? 'circuit service ready' : 'circuit worker ready')) resolve(entry.url);
        } catch {
          /* not JSON */
        }
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    void exited.then((code) =>
      reject(new Error(`${kind} exited (${code}) before it was ready:\n${output.join('\n')}`)),
    );
    // Generous: loading the service takes seconds, and far longer when the machine is busy (several test files at once).
    setTimeout(() => reject(new Error(`${kind} not ready after 60 s:\n${output.join('\n')}`)), 60_000).unref();
  });
  const url = await ready;
  return {
    proc,
    url,
    output,
    exited,
    kill: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      await exited;
    },
  };
}
