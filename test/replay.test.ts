import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { startFakeOpenAI } from './support/fake-openai';
import { makeRunnableCircuit, startHttpTarget, submitRun, waitForRun } from './support/run-factories';
import type { CircuitDefinition } from '../src/domain/definition';

/**
 * Replay and compare against a fake model server and a fake upstream that count the
 * requests they answer: a recorded replay calls nothing that did not change.
 */
jest.setTimeout(60_000);

let t: TestApp;
let openai: Awaited<ReturnType<typeof startFakeOpenAI>>;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
let owner: TestUser;
let other: TestUser;

const definition = (template: string): CircuitDefinition => ({
  query_schema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
  steps: [
    { id: 'prompt', kind: 'template', template },
    { id: 'ask', kind: 'llm', model: 'fake', messages: [{ role: 'user', content: '{{steps.prompt.output}}' }] },
    { id: 'fetch', kind: 'http', method: 'GET', url: `{{input.base}}/facts/{{input.topic}}` },
    { id: 'both', kind: 'transform', expression: '{"said": steps.ask.output, "facts": steps.fetch.output}' },
  ],
});

const modelCalls = () => openai.requests.length;
const upstreamCalls = () => target.requests.length;

beforeAll(async () => {
  openai = await startFakeOpenAI({ reply: (req) => `reply to ${req.messages.at(-1)!.content}` });
  target = await startHttpTarget((req, res) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ url: req.url, n: target.requests.length }));
  });
  t = await startTestApp({ openaiBaseUrl: openai.baseUrl, openaiApiKey: 'sk-test' });
  owner = await makeUser({ credits: 1000 });
  other = await makeUser({ credits: 1000 });
});
afterAll(async () => {
  await t.close();
  await openai.close();
  await target.close();
});

async function originalRun() {
  const made = await makeRunnableCircuit(owner, {
    ...definition('Tell me about {{input.topic}}'),
    query_schema: {
      type: 'object',
      properties: { topic: { type: 'string' }, base: { type: 'string' } },
      required: ['topic', 'base'],
    },
  });
  const res = await submitRun(t, owner.token, made.adaptorUid, { input: { topic: 'owls', base: target.url } });
  expect(res.status).toBe(200);
  const run = await waitForRun(t, res.body.payload.uid, owner.token);
  expect(run.state).toBe('COMPLETED');
  return { ...made, run };
}

async function replay(uid: string, body: Record<string, unknown>, token = owner.token) {
  const res = await t.rest('POST', `/circuit-runs/${uid}/replay`, { token, body });
  expect(res.status).toBe(200);
  expect(res.body.payload).toMatchObject({ state: 'PROVISIONED', replay_of: uid });
  return waitForRun(t, res.body.payload.uid, owner.token);
}

const outputsOf = (run: any) => ({
  output: run.result_blob.output,
  steps: Object.fromEntries(Object.entries(run.result_blob.steps).map(([id, s]: [string, any]) => [id, s.output])),
});

test('a recorded replay calls no upstream and yields the same outputs; the reused steps cost 0 credits', async () => {
  const { run } = await originalRun();
  const before = { model: modelCalls(), upstream: upstreamCalls() };
  const again = await replay(run.uid, {});
  expect(again.state).toBe('COMPLETED');
  expect({ model: modelCalls(), upstream: upstreamCalls() }).toEqual(before);
  expect(outputsOf(again)).toEqual(outputsOf(run));
  expect(again.result_blob.steps.ask).toMatchObject({ replayed: true, credits: 0 });
  expect(again.result_blob.steps.fetch).toMatchObject({ replayed: true, credits: 0 });
  expect(again).not.toHaveProperty('result_blob.steps.prompt.replayed');
  // The plain GET of an ordinary run has no replay_of.
  expect(run).not.toHaveProperty('replay_of');

  // Compare: everything the same.
  const compared = await t.rest('GET', `/circuit-runs/${run.uid}/compare/${again.uid}`, { token: owner.token });
  expect(compared.status).toBe(200);
  expect(compared.body.payload.output).toEqual({
    status: 'same',
    a: run.result_blob.output,
    b: run.result_blob.output,
  });
  expect(Object.values(compared.body.payload.steps).map((s: any) => s.status)).toEqual([
    'same',
    'same',
    'same',
    'same',
  ]);
});

test('a replay against a version whose template changed re-executes that step and the steps that read it, nothing else', async () => {
  const { run, circuit } = await originalRun();
  const v2 = await t.rest('POST', `/circuits/${circuit.uid}/versions`, {
    token: owner.token,
    body: {
      ...definition('Tell me briefly about {{input.topic}}'),
      query_schema: {
        type: 'object',
        properties: { topic: { type: 'string' }, base: { type: 'string' } },
        required: ['topic', 'base'],
      },
    },
  });
  expect(v2.status).toBe(200);
  const before = { model: modelCalls(), upstream: upstreamCalls() };
  const again = await replay(run.uid, { version_uid: v2.body.payload.uid });
  expect(again.state).toBe('COMPLETED');
  expect(again.circuit_version_uid).toBe(v2.body.payload.uid);
  // `ask` reads the changed template: one model call; `fetch` is unchanged: no upstream call.
  expect({ model: modelCalls() - before.model, upstream: upstreamCalls() - before.upstream }).toEqual({
    model: 1,
    upstream: 0,
  });
  expect(openai.requests.at(-1)!.body.messages[0].content).toBe('Tell me briefly about owls');
  expect(again.result_blob.steps.fetch).toMatchObject({ replayed: true });
  expect(again.result_blob.steps.ask).not.toHaveProperty('replayed');

  const compared = await t.rest('GET', `/circuit-runs/${run.uid}/compare/${again.uid}`, { token: owner.token });
  expect(compared.body.payload.output.status).toBe('changed');
  expect(
    Object.fromEntries(Object.entries(compared.body.payload.steps).map(([id, s]: [string, any]) => [id, s.status])),
  ).toEqual({ prompt: 'changed', ask: 'changed', fetch: 'same', both: 'changed' });
  expect(compared.body.payload.steps.ask).toEqual({
    status: 'changed',
    a: 'reply to Tell me about owls',
    b: 'reply to Tell me briefly about owls',
  });

  // GraphQL says the same.
  const gql = await t.gql(
    `query($a: ID!, $b: ID!) { compareCircuitRuns(a: $a, b: $b) { output steps } }`,
    { a: run.uid, b: again.uid },
    owner.token,
  );
  expect(gql.data.compareCircuitRuns.steps).toEqual(compared.body.payload.steps);
});

test('live mode and a changed input execute every step', async () => {
  const { run } = await originalRun();
  let before = { model: modelCalls(), upstream: upstreamCalls() };
  const live = await replay(run.uid, { mode: 'live' });
  expect(live.state).toBe('COMPLETED');
  expect({ model: modelCalls() - before.model, upstream: upstreamCalls() - before.upstream }).toEqual({
    model: 1,
    upstream: 1,
  });

  before = { model: modelCalls(), upstream: upstreamCalls() };
  const otherInput = await replay(run.uid, { input: { topic: 'bats', base: target.url } });
  expect({ model: modelCalls() - before.model, upstream: upstreamCalls() - before.upstream }).toEqual({
    model: 1,
    upstream: 1,
  });
  expect(otherInput.result_blob.steps.ask.output).toBe('reply to Tell me about bats');
});

test('replay refusals: owner only, terminal runs only, versions of the same circuit, input checked', async () => {
  const { run } = await originalRun();
  const status = async (uid: string, body: unknown, token?: string) =>
    (await t.rest('POST', `/circuit-runs/${uid}/replay`, { token, body })).status;
  expect(await status(run.uid, {}, undefined)).toBe(401);
  expect(await status(run.uid, {}, other.token)).toBe(403);
  expect(await status('00000000-0000-4000-8000-000000000000', {}, owner.token)).toBe(404);
  expect(await status(run.uid, { version_uid: '00000000-0000-4000-8000-000000000000' }, owner.token)).toBe(404);
  const elsewhere = await makeRunnableCircuit(owner, definition('x'));
  expect(await status(run.uid, { version_uid: elsewhere.version.uid }, owner.token)).toBe(400);
  expect(await status(run.uid, { input: { topic: 5 } }, owner.token)).toBe(400);

  // A run that is still RUNNING (waiting on an approval) is 409.
  const waits = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'ok', kind: 'approval', prompt: 'go?' }],
  });
  const started = await submitRun(t, owner.token, waits.adaptorUid, { input: {} });
  for (let i = 0; i < 400; i++) {
    const got = await t.rest('GET', `/circuit-runs/${started.body.payload.uid}`, { token: owner.token });
    if (got.body.payload.waiting_for) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  expect(await status(started.body.payload.uid, {}, owner.token)).toBe(409);
  await t.rest('POST', `/circuit-runs/${started.body.payload.uid}/cancel`, { token: owner.token });
});

test('GraphQL replayCircuitRun answers the run with replayOf', async () => {
  const { run } = await originalRun();
  const res = await t.gql(
    `mutation($uid: ID!) { replayCircuitRun(uid: $uid) { uid state replayOf } }`,
    { uid: run.uid },
    owner.token,
  );
  expect(res.errors).toBeUndefined();
  expect(res.data.replayCircuitRun).toMatchObject({ state: 'PROVISIONED', replayOf: run.uid });
  const done = await waitForRun(t, res.data.replayCircuitRun.uid, owner.token);
  expect(done.replay_of).toBe(run.uid);
});

test('CLI: circuits run replay-last replays the last runs against a version and prints the compare summary', async () => {
  const { circuit } = await originalRun();
  const v2 = await t.rest('POST', `/circuits/${circuit.uid}/versions`, {
    token: owner.token,
    body: {
      ...definition('Tell me more about {{input.topic}}'),
      query_schema: {
        type: 'object',
        properties: { topic: { type: 'string' }, base: { type: 'string' } },
        required: ['topic', 'base'],
      },
    },
  });
  expect(v2.status).toBe(200);
  const before = { model: modelCalls(), upstream: upstreamCalls() };
  const root = path.join(__dirname, '..');
  const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [
        path.join(root, 'bin', 'circuits.js'),
        'run',
        'replay-last',
        '--username',
        owner.username,
        '--circuit',
        circuit.name,
        '--version',
        v2.body.payload.uid,
        '--count',
        '1',
      ],
      {
        cwd: root,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          DATABASE_URL: t.databaseUrl,
          DATA_DIR: path.join(os.tmpdir(), 'replay-cli'),
          LOG_LEVEL: 'silent',
        },
        timeout: 60_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }),
    );
  });
  expect(out.stderr).toBe('');
  const summary = JSON.parse(out.stdout);
  expect(summary).toMatchObject({ version_uid: v2.body.payload.uid, mode: 'recorded', replayed: 1, changed: 1 });
  expect(summary.runs[0]).toMatchObject({
    state: 'COMPLETED',
    output: 'changed',
    steps: { prompt: 'changed', ask: 'changed', fetch: 'same', both: 'changed' },
  });
  expect({ model: modelCalls() - before.model, upstream: upstreamCalls() - before.upstream }).toEqual({
    model: 1,
    upstream: 0,
  });
});
