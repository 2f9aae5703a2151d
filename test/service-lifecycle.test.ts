import { ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase } from './support/database';

// Runs the built service (`npm test` builds first; run `npm run build` before running this file alone).
const ROOT = path.join(__dirname, '..');
const MAIN = path.join(ROOT, 'dist', 'src', 'main.js');
const BIN = path.join(ROOT, 'bin', 'circuits.js');

jest.setTimeout(180_000);

interface Service { child: ChildProcess; url: string; output: () => string; exited: Promise<number | null> }

const started: ChildProcess[] = [];
const dataDirs: string[] = [];

function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'info', PORT: '0', SECRET_KEY: 'lifecycle-secret', JOB_LOCK_LIFETIME_MS: '5000', ...extra };
}

/** Starts `node dist/src/main.js` and resolves once it logs "circuit service ready". */
function startService(env: Record<string, string>): Promise<Service> {
  const child = spawn(process.execPath, [MAIN], { cwd: ROOT, env: baseEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service not ready after 60 s:\n${out}`)), 60_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const entry = JSON.parse(line) as { msg?: string; url?: string };
          if (entry.msg === 'circuit service ready' && entry.url) {
            clearTimeout(timer);
            resolve({ child, url: entry.url, output: () => out, exited });
            return;
          }
        } catch { /* partial line */ }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`service exited with ${code} before ready:\n${out}`)); });
  });
}

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string; json: any }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: baseEnv({ LOG_LEVEL: 'silent', ...env }), timeout: 60_000 }, (error, stdout, stderr) => {
      let json: unknown;
      try { json = JSON.parse(stdout); } catch { /* not JSON */ }
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr, json });
    });
  });
}

function isAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

function postmasterPid(dataDir: string): number | undefined {
  const file = path.join(dataDir, 'postgres', 'postmaster.pid');
  if (!fs.existsSync(file)) return undefined;
  return Number(fs.readFileSync(file, 'utf8').split('\n')[0]) || undefined;
}

async function stopWithSigint(service: Service): Promise<{ code: number | null; ms: number }> {
  const began = Date.now();
  service.child.kill('SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([service.exited, new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), 15_000); })]);
  clearTimeout(timer);
  if (code === 'timeout') throw new Error(`service did not exit within 15 s of SIGINT:\n${service.output()}`);
  return { code, ms: Date.now() - began };
}

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, init);
  return { status: res.status, body: await res.json() };
}

afterAll(async () => {
  // Never leave a service or a PostgreSQL behind, even when a test failed half way.
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dataDirs) {
    const pid = postmasterPid(dir);
    if (pid && isAlive(pid)) process.kill(pid, 'SIGINT');
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
});

beforeAll(() => {
  if (!fs.existsSync(MAIN)) throw new Error('dist/ is missing: run npm run build');
});

test('with no DATABASE_URL the service runs its own PostgreSQL, shares it with the CLI, stops it on SIGINT and keeps the data', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'circuits-lifecycle-'));
  dataDirs.push(dataDir);
  const env = { DATA_DIR: dataDir };

  const first = await startService(env);
  expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect((await json(`${first.url}/readyz`)).status).toBe(200);
  const record = JSON.parse(fs.readFileSync(path.join(dataDir, 'postgres.json'), 'utf8')) as { port: number; pid: number };
  expect(record.pid).toBe(first.child.pid);
  const postmaster = postmasterPid(dataDir)!;
  expect(isAlive(postmaster)).toBe(true);

  // The CLI joins the running server (same port record, same postmaster) instead of starting another.
  const user = await cli(['user', 'create', '--username', 'lifecycle', '--credits', '10'], env);
  expect(user.stderr).toBe('');
  expect(user.json).toMatchObject({ username: 'lifecycle', token: expect.stringMatching(/^cst_/) });
  expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'postgres.json'), 'utf8'))).toEqual(record);
  expect(postmasterPid(dataDir)).toBe(postmaster);

  const created = await json(`${first.url}/api/v1/circuits`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.json.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'persisted', description: 'survives a restart' }),
  });
  expect(created.status).toBe(200);

  const stopped = await stopWithSigint(first);
  expect(stopped.code).toBe(0);
  expect(stopped.ms).toBeLessThan(10_000);
  expect(isAlive(postmaster)).toBe(false);
  expect(fs.existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  expect(fs.existsSync(path.join(dataDir, 'postgres.json'))).toBe(false);

  // With the service down, the CLI starts PostgreSQL for its own duration and stops it again.
  const granted = await cli(['credits', 'grant', '--username', 'lifecycle', '--amount', '5'], env);
  expect(granted.stderr).toBe('');
  expect(granted.json).toEqual({ username: 'lifecycle', credits: 15 });
  expect(fs.existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

  const second = await startService(env);
  const fetched = await json(`${second.url}/api/v1/users/lifecycle/circuits/persisted`);
  expect(fetched.status).toBe(200);
  expect(fetched.body.payload).toMatchObject({ uid: created.body.payload.uid, description: 'survives a restart' });
  const viewer = await json(`${second.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.json.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ viewer { username credits } }' }),
  });
  expect(viewer.body.data?.viewer).toMatchObject({ username: 'lifecycle', credits: 15 });
  const secondPostmaster = postmasterPid(dataDir)!;
  const again = await stopWithSigint(second);
  expect(again.code).toBe(0);
  expect(isAlive(secondPostmaster)).toBe(false);
});

test('with DATABASE_URL the service and the CLI use that server and start no PostgreSQL of their own', async () => {
  if (!process.env.TEST_DATABASE_URL) {
    console.info('external server: TEST_DATABASE_URL is unset, so the "external" server is the test run\'s own PostgreSQL');
  }
  const database = await createTestDatabase();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'circuits-external-'));
  dataDirs.push(dataDir);
  const env = { DATA_DIR: dataDir, DATABASE_URL: database.url };
  try {
    const service = await startService(env);
    expect(service.output()).toContain('"database":"DATABASE_URL"');
    const user = await cli(['user', 'create', '--username', 'external'], env);
    expect(user.json).toMatchObject({ username: 'external' });
    const created = await json(`${service.url}/api/v1/circuits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.json.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'external-circuit' }),
    });
    expect(created.status).toBe(200);
    expect(fs.existsSync(path.join(dataDir, 'postgres'))).toBe(false);
    const stopped = await stopWithSigint(service);
    expect(stopped.code).toBe(0);
    expect(stopped.ms).toBeLessThan(10_000);
  } finally {
    await database.drop();
  }
});
