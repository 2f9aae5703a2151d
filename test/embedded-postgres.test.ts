import { ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ServerResponse } from 'node:http';
import { Client } from 'pg';
import { startEmbeddedDatabase } from '../src/db/embedded';
import { readSse, startHttpTarget } from './support/run-factories';

// Runs the built service (`npm test` builds first; run `npm run build` before running this file alone).
const ROOT = path.join(__dirname, '..');
const MAIN = path.join(ROOT, 'dist', 'src', 'main.js');
const BIN = path.join(ROOT, 'bin', 'circuits.js');

jest.setTimeout(180_000);

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function modesUpTo(dir: string): Record<string, string> {
  const modes: Record<string, string> = {};
  for (let current = dir; ; current = path.dirname(current)) {
    const stat = fs.statSync(current);
    modes[current] = `${(stat.mode & 0o7777).toString(8)} ${stat.uid}:${stat.gid}`;
    if (path.dirname(current) === current) return modes;
  }
}

function postmasterPid(dataDir: string): number {
  return Number(fs.readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

test('from a private (0700) directory the embedded PostgreSQL starts as the service user would, changing no directory mode', async () => {
  const privateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'circuits-private-'));
  cleanups.push(() => fs.rmSync(privateDir, { recursive: true, force: true }));
  expect(fs.statSync(privateDir).mode & 0o777).toBe(0o700);
  const dataDir = path.join(privateDir, 'clone', '.data');
  const before = modesUpTo(privateDir);

  const database = await startEmbeddedDatabase(dataDir);
  try {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    expect((await client.query('SELECT current_database() AS db')).rows).toEqual([{ db: 'circuits' }]);
    await client.end();
    // Its files belong to the user running the service (root stays root: no `postgres` OS user involved).
    expect(fs.statSync(path.join(dataDir, 'postgres', 'PG_VERSION')).uid).toBe(process.getuid!());
    // The superuser password is random per data directory and readable by the service user only.
    expect(new URL(database.url).password).not.toBe('postgres');
    expect(fs.statSync(path.join(dataDir, 'postgres-password')).mode & 0o777).toBe(0o600);
  } finally {
    await database.stop();
  }
  expect(modesUpTo(privateDir)).toEqual(before);
});

interface Service {
  child: ChildProcess;
  url: string;
  lines: () => Record<string, any>[];
  exited: Promise<number | null>;
}

function startService(env: Record<string, string>): Promise<Service> {
  // Its own process group, like a terminal's foreground job: Ctrl-C below is a SIGINT to the whole group.
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  });
  let out = '';
  const lines = () =>
    out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => {
        try {
          return JSON.parse(line) as Record<string, any>;
        } catch {
          return {};
        }
      });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service not ready after 90 s:\n${out}`)), 90_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const ready = lines().find((entry) => entry.msg === 'circuit service ready');
      if (ready) {
        clearTimeout(timer);
        resolve({ child, url: ready.url as string, lines, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before ready:\n${out}`));
    });
  });
}

function cli(args: string[], env: Record<string, string>): Promise<any> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`circuits ${args.join(' ')} failed: ${stderr}`));
        else resolve(JSON.parse(stdout));
      },
    );
  });
}

async function api(url: string, token: string, method: string, body?: unknown): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('the service restarts its embedded PostgreSQL after kill -9, loses no accepted run, and Ctrl-C then stops it quietly', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'circuits-supervised-'));
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const held: ServerResponse[] = [];
  const target = await startHttpTarget((_req, res) => {
    held.push(res);
  });
  cleanups.push(() => target.close());
  cleanups.push(() => {
    for (const res of held) res.destroy();
  });
  const env = {
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'info',
    SECRET_KEY: 'supervised',
    JOB_LOCK_LIFETIME_MS: '4000',
    HTTP_STEP_ALLOW_PRIVATE: 'true',
  };
  const service = await startService(env);

  // Both threads log what is true of their database: this DATA_DIR's embedded PostgreSQL and its port, no password.
  const port = Number(fs.readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[3]);
  const ready = (msg: string) => service.lines().find((entry) => entry.msg === msg)!;
  for (const line of [ready('circuit worker ready'), ready('circuit service ready')])
    expect(line).toMatchObject({ database: 'embedded', databasePort: port, dataDir });
  expect(ready('circuit worker ready').thread).toBe('run-worker');
  const password = fs.readFileSync(path.join(dataDir, 'postgres-password'), 'utf8').trim();
  expect(password.length).toBeGreaterThan(8);
  expect(JSON.stringify(service.lines())).not.toContain(password);

  const { token } = await cli(['user', 'create', '--username', 'supervised', '--credits', '10'], env);
  const circuit = (await api(`${service.url}/api/v1/circuits`, token, 'POST', { name: 'slow' })).payload;
  const published = await api(`${service.url}/graphql`, token, 'POST', {
    query: 'mutation($c: ID!, $d: JSON!) { publishCircuitVersion(circuitUid: $c, definition: $d) { uid } }',
    variables: {
      c: circuit.uid,
      d: {
        query_schema: { type: 'object' },
        steps: [{ id: 'call', kind: 'http', method: 'GET', url: `${target.url}/slow` }],
      },
    },
  });
  expect(published.errors).toBeUndefined();
  const submit = async () =>
    (await api(`${service.url}/api/v1/circuit-adaptors/${circuit.adaptor_uid}/query`, token, 'POST', { input: {} }))
      .payload.uid as string;
  const readRun = async (uid: string) => (await api(`${service.url}/api/v1/circuit-runs/${uid}`, token, 'GET')).payload;

  // Run 1 is accepted and in flight (inside its http step) when PostgreSQL is killed.
  const before = await submit();
  await until('run 1 in its http step', async () => (held.length === 1 ? true : undefined));
  const postmaster = postmasterPid(dataDir);
  process.kill(postmaster, 'SIGKILL');
  const readyz = async () => (await fetch(`${service.url}/readyz`)).status;
  await until('/readyz to report the outage', async () => ((await readyz()) === 503 ? true : undefined), 10_000, 20);
  expect((await fetch(`${service.url}/healthz`)).status).toBe(200); // the process lives: no reason to restart it
  await until('/readyz to recover', async () => ((await readyz()) === 200 ? true : undefined));
  expect(postmasterPid(dataDir)).not.toBe(postmaster);

  // Run 1 finishes its step after the restart; run 2 is submitted after it.
  for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":1}');
  const after = await submit();
  // Its events still arrive: the run-event listener reconnected to the restarted server.
  let streamOpen = false;
  const stream = readSse(`${service.url}/api/v1/circuit-runs/${after}/events`, {
    token,
    timeoutMs: 60_000,
    onOpen: () => {
      streamOpen = true;
    },
  }).catch((error: unknown) => ({ events: [{ data: JSON.stringify({ state: `stream failed: ${String(error)}` }) }] }));
  await until('run 2 in its http step', async () => (held.length > 0 ? true : undefined));
  await until('the event stream of run 2', async () => (streamOpen ? true : undefined));
  for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":2}');
  const settled = async (uid: string) => {
    const run = await readRun(uid);
    return ['COMPLETED', 'EXCEPTION'].includes(run.state) ? run : undefined;
  };
  // Run 1 may be retried by Agenda if its first attempt could not record its end: release every call it makes.
  const releaser = setInterval(() => {
    for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":1}');
  }, 50);
  try {
    const [first, second] = await Promise.all([
      until('run 1 to end', () => settled(before), 60_000, 100),
      until('run 2 to end', () => settled(after), 60_000, 100),
    ]);
    // (Which held call answered which run does not matter: run 1 may have been retried meanwhile.)
    expect(first).toMatchObject({ state: 'COMPLETED', result_blob: { output: { ok: expect.any(Number) } } });
    expect(second).toMatchObject({ state: 'COMPLETED', result_blob: { output: { ok: expect.any(Number) } } });
    expect(JSON.parse((await stream).events.at(-1)?.data ?? '{}').state).toBe('COMPLETED');
  } finally {
    clearInterval(releaser);
  }
  const logged = service.lines();
  expect(logged).toContainEqual(
    expect.objectContaining({
      component: 'postgres',
      msg: expect.stringMatching(/exited unexpectedly \(SIGKILL\); restarting it/),
    }),
  );
  expect(logged).toContainEqual(
    expect.objectContaining({ component: 'postgres', msg: expect.stringMatching(/^embedded PostgreSQL restarted/) }),
  );
  // Each dedicated connection (LISTEN channels, the worker's presence) logs the outage once each way,
  // without a stack, and nothing per reconnect attempt.
  // `npm start` has two threads (the API and its run worker), each with its own connections.
  const connection = (entry: Record<string, any>) =>
    `${String(entry.msg).replace(/ (lost; reconnecting|restored)$/, '')} ${entry.channel ?? ''}${entry.application ? ` [${entry.application}]` : ''}${entry.thread ? ` (${entry.thread})` : ''}`;
  const lost = logged.filter((entry) => / connection lost; reconnecting$/.test(String(entry.msg)));
  // A connection may come back after the runs have ended (its reconnect back-off): waited for, not assumed.
  const restoredNow = () => service.lines().filter((entry) => / connection restored$/.test(String(entry.msg)));
  await until(
    'every lost connection to be restored',
    async () => (restoredNow().length >= lost.length ? true : undefined),
    30_000,
    100,
  );
  const restored = restoredNow();
  expect(lost.map(connection)).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^LISTEN connection circuit_run_state( \[[^\]]*\])?$/),
      expect.stringMatching(/^LISTEN connection circuit_run_state( \[[^\]]*\])? \(run-worker\)$/),
      'worker presence connection  (run-worker)',
    ]),
  );
  expect(lost.filter((entry) => 'err' in entry || entry.level !== 40)).toEqual([]);
  expect(new Set(lost.map(connection)).size).toBe(lost.length);
  expect(restored.map(connection).sort()).toEqual(lost.map(connection).sort());
  expect(logged.filter((entry) => /reconnect failed/.test(String(entry.msg)))).toEqual([]);

  // Ctrl-C in a terminal: SIGINT to the whole process group. PostgreSQL (its own group) is stopped by
  // the service after its connections close, so nothing complains on the way down.
  const shutdownFrom = service.lines().length;
  process.kill(-service.child.pid!, 'SIGINT');
  expect(await service.exited).toBe(0);
  const shutdown = service.lines().slice(shutdownFrom);
  expect(shutdown.filter((entry) => entry.level >= 40)).toEqual([]);
  expect(shutdown.at(-1)).toMatchObject({ level: 30, msg: 'service stopped' });
  expect(fs.existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
});
