import type { ServerResponse } from 'node:http';
import { QueryTypes } from 'sequelize';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { startFakeOpenAI } from './support/fake-openai';
import {
  makeRunnableCircuit,
  ServiceProcess,
  spawnServiceProcess,
  startHttpTarget,
  submitRun,
  waitForRun,
} from './support/run-factories';
import type { CircuitDefinition } from '../src/domain/definition';

/**
 * The step cache, with a fake model server and a fake upstream that count requests.
 * This process only enqueues; runs execute in two spawned worker processes (`npm run build` first),
 * so single flight is shown across processes.
 */
jest.setTimeout(120_000);

let t: TestApp;
let openai: Awaited<ReturnType<typeof startFakeOpenAI>>;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const workers: ServiceProcess[] = [];
let owner: TestUser;
let other: TestUser;
const counts: Record<string, number> = {};
const failNext = new Set<string>();

beforeAll(async () => {
  openai = await startFakeOpenAI({ reply: (req) => `reply to ${req.messages.at(-1)!.content}` });
  target = await startHttpTarget((req, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const n = (counts[path] = (counts[path] ?? 0) + 1);
    if (failNext.delete(path)) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('down');
      return;
    }
    const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path, n }));
    if (path === '/slow') setTimeout(answer, 1_000);
    else answer();
  });
  t = await startTestApp({ runWorker: false });
  const env = { OPENAI_BASE_URL: openai.baseUrl, OPENAI_API_KEY: 'sk-test' };
  workers.push(
    ...(await Promise.all([
      spawnServiceProcess('worker', t.databaseUrl, env),
      spawnServiceProcess('worker', t.databaseUrl, env),
    ])),
  );
  owner = await makeUser({ credits: 10_000 });
  other = await makeUser({ credits: 10_000 });
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await t.close();
  await openai.close();
  await target.close();
});

type Cache = { ttl_s: number; scope?: 'caller' | 'circuit' };
const httpStep = (path: string, cache: Cache) => ({
  id: 'fetch',
  kind: 'http',
  method: 'GET',
  url: `{{input.base}}${path}`,
  cache,
});
const withInput = (steps: unknown[]): CircuitDefinition => ({
  query_schema: { type: 'object', properties: { base: { type: 'string' }, topic: { type: 'string' } } },
  steps: steps as never,
});

async function run(
  adaptorUid: string,
  user: TestUser,
  extra: Record<string, unknown> = {},
  input: Record<string, unknown> = {},
) {
  const res = await submitRun(t, user.token, adaptorUid, { input: { base: target.url, ...input }, ...extra });
  expect(res.status).toBe(200);
  return waitForRun(t, res.body.payload.uid, user.token, 60_000);
}

async function completedEvent(uid: string, stepId: string): Promise<Record<string, unknown> | undefined> {
  const [row] = await t.app.services.sequelize.query<{ data: Record<string, unknown> }>(
    `SELECT data FROM circuit_run_events WHERE run_uid = $1 AND kind = 'step' AND data->>'step_id' = $2 AND data->>'status' = 'completed'`,
    { bind: [uid, stepId], type: QueryTypes.SELECT },
  );
  return row?.data;
}

async function creditsCost(uid: string): Promise<number> {
  const [row] = await t.app.services.sequelize.query<{ cost: string }>(
    'SELECT credits_cost AS cost FROM circuit_runs WHERE uid = $1',
    { bind: [uid], type: QueryTypes.SELECT },
  );
  return Number(row.cost);
}

test('a hit calls no upstream, costs 0 credits, and is marked cached in result_blob and the step event', async () => {
  const { adaptorUid } = await makeRunnableCircuit(
    owner,
    withInput([
      {
        id: 'ask',
        kind: 'llm',
        model: 'fake',
        messages: [{ role: 'user', content: 'about {{input.topic}}' }],
        cache: { ttl_s: 600 },
      },
      httpStep('/hit', { ttl_s: 600 }),
    ]),
  );
  const first = await run(adaptorUid, owner, {}, { topic: 'owls' });
  expect(first.state).toBe('COMPLETED');
  const calls = { model: openai.requests.length, upstream: counts['/hit'] };
  expect(calls.upstream).toBe(1);
  expect(first.result_blob.steps.ask).not.toHaveProperty('cached');

  const second = await run(adaptorUid, owner, {}, { topic: 'owls' });
  expect({ model: openai.requests.length, upstream: counts['/hit'] }).toEqual(calls);
  expect(second.result_blob.steps.ask).toMatchObject({ output: 'reply to about owls', credits: 0, cached: true });
  expect(second.result_blob.steps.fetch).toMatchObject({
    output: first.result_blob.steps.fetch.output,
    credits: 0,
    cached: true,
  });
  expect(await completedEvent(second.uid, 'ask')).toMatchObject({ cached: true, credits: 0 });
  expect(await creditsCost(second.uid)).toBe(1); // the base credit only
  expect(await creditsCost(first.uid)).toBeGreaterThan(1);

  // A different rendered request is a miss.
  await run(adaptorUid, owner, {}, { topic: 'bats' });
  expect(openai.requests.length).toBe(calls.model + 1);
});

test("scope caller never serves one user's result to another; scope circuit shares it", async () => {
  const caller = await makeRunnableCircuit(owner, withInput([httpStep('/caller', { ttl_s: 600, scope: 'caller' })]));
  await run(caller.adaptorUid, owner);
  await run(caller.adaptorUid, owner);
  expect(counts['/caller']).toBe(1);
  const theirs = await run(caller.adaptorUid, other);
  expect(counts['/caller']).toBe(2);
  expect(theirs.result_blob.steps.fetch).not.toHaveProperty('cached');

  const shared = await makeRunnableCircuit(owner, withInput([httpStep('/shared', { ttl_s: 600, scope: 'circuit' })]));
  await run(shared.adaptorUid, owner);
  const theirsShared = await run(shared.adaptorUid, other);
  expect(counts['/shared']).toBe(1);
  expect(theirsShared.result_blob.steps.fetch).toMatchObject({ cached: true });
});

test('ttl_s: an expired result is called again', async () => {
  const { adaptorUid } = await makeRunnableCircuit(owner, withInput([httpStep('/ttl', { ttl_s: 1 })]));
  await run(adaptorUid, owner);
  expect(counts['/ttl']).toBe(1);
  // Positive signal: the stored result (its output names the path) has expired.
  const live = async () =>
    (
      await t.app.services.sequelize.query<{ n: string }>(
        "SELECT count(*) AS n FROM step_cache WHERE output->>'path' = '/ttl' AND expires_at > now()",
        { type: QueryTypes.SELECT },
      )
    )[0].n;
  const deadline = Date.now() + 10_000;
  while (Number(await live()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  expect(Number(await live())).toBe(0);
  const again = await run(adaptorUid, owner);
  expect(counts['/ttl']).toBe(2);
  expect(again.result_blob.steps.fetch).not.toHaveProperty('cached');
});

test('a failed step is not cached: the next run calls again', async () => {
  const { adaptorUid } = await makeRunnableCircuit(owner, withInput([httpStep('/flaky', { ttl_s: 600 })]));
  failNext.add('/flaky');
  const failed = await run(adaptorUid, owner);
  expect(failed.state).toBe('EXCEPTION');
  expect(counts['/flaky']).toBe(1);
  const next = await run(adaptorUid, owner);
  expect(next.state).toBe('COMPLETED');
  expect(counts['/flaky']).toBe(2);
  expect(next.result_blob.steps.fetch).not.toHaveProperty('cached');
});

test('"cache": "bypass" skips the read and still stores the result', async () => {
  const { adaptorUid } = await makeRunnableCircuit(owner, withInput([httpStep('/bypass', { ttl_s: 600 })]));
  const first = await run(adaptorUid, owner);
  const bypassed = await run(adaptorUid, owner, { cache: 'bypass' });
  expect(counts['/bypass']).toBe(2);
  expect(bypassed.result_blob.steps.fetch.output).toEqual({ path: '/bypass', n: 2 });
  expect(first.result_blob.steps.fetch.output).toEqual({ path: '/bypass', n: 1 });
  const after = await run(adaptorUid, owner);
  expect(counts['/bypass']).toBe(2);
  expect(after.result_blob.steps.fetch).toMatchObject({ cached: true, output: { path: '/bypass', n: 2 } });
  expect((await submitRun(t, owner.token, adaptorUid, { input: {}, cache: 'never' })).status).toBe(400);
});

test('50 concurrent identical misses from 2 worker processes make exactly one upstream call', async () => {
  const { adaptorUid } = await makeRunnableCircuit(owner, withInput([httpStep('/slow', { ttl_s: 600 })]));
  const submitted = await Promise.all(
    Array.from({ length: 50 }, () => submitRun(t, owner.token, adaptorUid, { input: { base: target.url } })),
  );
  const runs = await Promise.all(submitted.map((res) => waitForRun(t, res.body.payload.uid, owner.token, 60_000)));
  expect(runs.map((r) => r.state)).toEqual(Array(50).fill('COMPLETED'));
  expect(counts['/slow']).toBe(1);
  for (const r of runs) expect(r.result_blob.steps.fetch.output).toEqual({ path: '/slow', n: 1 });
  expect(runs.filter((r) => r.result_blob.steps.fetch.cached).length).toBe(49);
  // Both workers took part.
  const [row] = await t.app.services.sequelize.query<{ n: string }>(
    'SELECT count(DISTINCT worker) AS n FROM circuit_runs WHERE uid IN (:uids)',
    { replacements: { uids: runs.map((r) => r.uid) }, type: QueryTypes.SELECT },
  );
  expect(Number(row.n)).toBe(2);
});

test('publishing checks the cache field', async () => {
  const { circuit } = await makeRunnableCircuit(owner, withInput([httpStep('/x', { ttl_s: 5 })]));
  const publish = (cache: unknown) =>
    t.rest('POST', `/circuits/${circuit.uid}/versions`, {
      token: owner.token,
      body: withInput([{ id: 'a', kind: 'template', template: 'x', cache }]),
    });
  expect((await publish({ ttl_s: 60, scope: 'circuit' })).status).toBe(200);
  expect((await publish({ ttl_s: 0 })).status).toBe(400);
  expect((await publish({ ttl_s: 2_592_001 })).status).toBe(400);
  expect((await publish({ ttl_s: 60, scope: 'everyone' })).status).toBe(400);
  expect((await publish({ scope: 'caller' })).status).toBe(400);
});
