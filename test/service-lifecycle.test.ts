import fs from 'node:fs';
import path from 'node:path';
import { createTestDatabase } from './support/database';
import { isAlive, postmasterPid, useSpawnedServices, type Service } from './support/spawned-service';

// Runs the built service (`npm test` builds first; run `npm run build` before running this file alone).
jest.setTimeout(180_000);

const services = useSpawnedServices('lifecycle-secret');
const startService = (env: Record<string, string>): Promise<Service> => services.start(env).ready;
const { cli } = services;

async function stopWithSigint(service: Service): Promise<{ code: number | null; ms: number }> {
  const began = Date.now();
  service.child.kill('SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    service.exited,
    new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), 15_000);
    }),
  ]);
  clearTimeout(timer);
  if (code === 'timeout') throw new Error(`service did not exit within 15 s of SIGINT:\n${service.output()}`);
  return { code, ms: Date.now() - began };
}

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, init);
  return { status: res.status, body: await res.json() };
}

test('with no DATABASE_URL the service runs its own PostgreSQL, shares it with the CLI, stops it on SIGINT and keeps the data', async () => {
  const dataDir = services.dataDir('circuits-lifecycle-');
  const env = { DATA_DIR: dataDir };

  const first = await startService(env);
  expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect((await json(`${first.url}/readyz`)).status).toBe(200);
  const record = JSON.parse(fs.readFileSync(path.join(dataDir, 'postgres.json'), 'utf8')) as {
    port: number;
    pid: number;
  };
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
    console.info(
      'external server: TEST_DATABASE_URL is unset, so the "external" server is the test run\'s own PostgreSQL',
    );
  }
  const database = await createTestDatabase();
  const dataDir = services.dataDir('circuits-external-');
  const env = { DATA_DIR: dataDir, DATABASE_URL: database.url };
  try {
    const service = await startService(env);
    expect(service.output()).toContain('"database":"external"');
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
