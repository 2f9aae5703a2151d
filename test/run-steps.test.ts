import type { ServerResponse } from 'node:http';
import { startTestApp, TestApp, testConfig } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, startHttpTarget, submitRun, waitForRun } from './support/run-factories';
import { startFakeOpenAI } from './support/fake-openai';
import { CreditLedger } from '../src/models/CreditLedger';
import { CircuitRun } from '../src/models/CircuitRun';
import type { CircuitDefinition } from '../src/domain/definition';
import { httpStep } from '../src/engine/steps/http';
import { isNonPublicAddress } from '../src/engine/net-guard';
import type { StepContext } from '../src/engine/steps/types';

let t: TestApp;
let openai: Awaited<ReturnType<typeof startFakeOpenAI>>;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const held: ServerResponse[] = [];
let owner: TestUser;

beforeAll(async () => {
  openai = await startFakeOpenAI({
    failModels: ['broken-model'],
    reply: (req) => `model ${req.model} says: ${req.messages.map((m) => `${m.role}=${m.content}`).join(' | ')}`,
  });
  target = await startHttpTarget((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/hold') return void held.push(res);
    if (url.pathname === '/json')
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ path: url.pathname, q: url.searchParams.get('q') }));
    if (url.pathname === '/text') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('plain words');
    if (url.pathname === '/echo')
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ method: req.method, auth: req.headers['x-token'] }));
    if (url.pathname === '/big') return void res.writeHead(200).end(Buffer.alloc(2 * 1024 * 1024, 97));
    res.writeHead(503).end('unavailable');
  });
  t = await startTestApp({ openaiBaseUrl: openai.baseUrl, openaiApiKey: 'sk-test' });
  owner = await makeUser({ credits: 100 });
});
afterAll(async () => {
  for (const res of held) res.end('{}');
  await t.close();
  await target.close();
  await openai.close();
});

async function run(definition: CircuitDefinition, input: Record<string, unknown> = {}) {
  const { adaptorUid } = await makeRunnableCircuit(owner, definition);
  const submitted = await submitRun(t, owner.token, adaptorUid, { input });
  expect(submitted.status).toBe(200);
  return waitForRun(t, submitted.body.payload.uid, owner.token);
}

const anyObject: CircuitDefinition['query_schema'] = { type: 'object' };

test('llm: messages are rendered, the reply is the output, usage is recorded and credits follow tokens', async () => {
  const result = await run(
    {
      query_schema: anyObject,
      steps: [
        {
          id: 'ask',
          kind: 'llm',
          model: 'gpt-test',
          temperature: 0.2,
          max_tokens: 50,
          messages: [
            { role: 'system', content: 'be brief' },
            { role: 'user', content: 'hi {{input.name}}' },
          ],
        },
      ],
    },
    { name: 'Ada' },
  );
  expect(result.state).toBe('COMPLETED');
  expect(result.result_blob.output).toBe('model gpt-test says: system=be brief | user=hi Ada');
  expect(result.result_blob.steps.ask).toMatchObject({
    kind: 'llm',
    credits: 2,
    usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 },
  });
  const request = openai.requests.at(-1)!;
  expect(request.authorization).toBe('Bearer sk-test');
  expect(request.body).toMatchObject({ model: 'gpt-test', temperature: 0.2, max_tokens: 50 });
  const charge = await CreditLedger.findOne({ where: { run_uid: result.uid } });
  expect(Number(charge!.cost)).toBe(3);
});

test('llm: a failing model call ends the run in EXCEPTION, with the reason kept for the logs', async () => {
  const result = await run({
    query_schema: anyObject,
    steps: [{ id: 'ask', kind: 'llm', model: 'broken-model', messages: [{ role: 'user', content: 'x' }] }],
  });
  expect(result.state).toBe('EXCEPTION');
  expect((await CircuitRun.findByPk(result.uid))!.failure_reason).toMatch(/step ask: model call failed \(HTTP 400\)/);
});

test('http: templated url, headers and body; JSON parsed, text kept; steps run concurrently as soon as their inputs are ready', async () => {
  const definition: CircuitDefinition = {
    query_schema: anyObject,
    steps: [
      { id: 'a', kind: 'http', method: 'GET', url: `${target.url}/hold?n=a` },
      { id: 'b', kind: 'http', method: 'GET', url: `${target.url}/hold?n=b` },
      { id: 'json', kind: 'http', method: 'GET', url: `${target.url}/json?q={{input.q}}` },
      { id: 'text', kind: 'http', method: 'GET', url: `${target.url}/text` },
      {
        id: 'post',
        kind: 'http',
        method: 'POST',
        url: `${target.url}/echo`,
        headers: { 'X-Token': 'tok-{{input.q}}' },
        body: { both: '{{steps.a.output.n}}{{steps.b.output.n}}' },
      },
    ],
    output: '{"json": steps.json.output, "text": steps.text.output, "post": steps.post.output}',
  };
  const { adaptorUid } = await makeRunnableCircuit(owner, definition);
  const { body } = await submitRun(t, owner.token, adaptorUid, { input: { q: 'hello' } });
  const deadline = Date.now() + 10_000;
  while (held.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(held.length).toBe(2); // a and b were both in flight at once
  const [first, second] = held.splice(0);
  first.writeHead(200, { 'content-type': 'application/json' }).end('{"n":"A"}');
  second.writeHead(200, { 'content-type': 'application/json' }).end('{"n":"B"}');
  const result = await waitForRun(t, body.payload.uid, owner.token);
  expect(result.state).toBe('COMPLETED');
  expect(result.result_blob.output).toEqual({
    json: { path: '/json', q: 'hello' },
    text: 'plain words',
    post: { method: 'POST', auth: 'tok-hello' },
  });
  const post = target.requests.find((r) => r.url === '/echo')!;
  expect(JSON.parse(post.body).both).toMatch(/^(AB|BA)$/);
  expect(post.headers['content-type']).toBe('application/json');
  const steps = result.result_blob.steps;
  expect(new Date(steps.post.started_at).getTime()).toBeGreaterThanOrEqual(new Date(steps.a.ended_at).getTime());
});

test.each([
  ['a non-2xx answer', '/down'],
  ['a response over 1 MiB', '/big'],
])('http: %s fails the run', async (_what, path) => {
  const result = await run({
    query_schema: anyObject,
    steps: [{ id: 'h', kind: 'http', method: 'GET', url: `${target.url}${path}` }],
  });
  expect(result.state).toBe('EXCEPTION');
});

describe('http: private targets', () => {
  const ctx = (allow: boolean): StepContext => ({
    input: {},
    steps: {},
    depth: 0,
    signal: new AbortController().signal,
    budget: { maxSteps: 1000, maxResultBytes: 4 * 1024 * 1024, hold: async () => true },
    run: { uid: 'r', userUid: 'u', circuitUid: 'c', versionUid: 'v' },
    deps: { config: testConfig({ httpStepAllowPrivate: allow }) } as Partial<
      StepContext['deps']
    > as StepContext['deps'],
  });

  test.each([
    'http://127.0.0.1:1/',
    'http://localhost:1/',
    'http://[::1]:1/',
    'http://169.254.169.254/latest',
    'http://10.1.2.3/',
    'http://192.168.0.1/',
    'http://[::ffff:127.0.0.1]/',
    'http://0.0.0.0/',
  ])('refuses %s unless allowed', async (url) => {
    await expect(httpStep.execute({ id: 'h', kind: 'http', method: 'GET', url }, ctx(false))).rejects.toThrow(
      /refusing to call/,
    );
  });

  test('allows loopback when configured, and classifies addresses', async () => {
    const result = await httpStep.execute(
      { id: 'h', kind: 'http', method: 'GET', url: `${target.url}/text` },
      ctx(true),
    );
    expect(result.output).toBe('plain words');
    expect(isNonPublicAddress('8.8.8.8')).toBe(false);
    expect(isNonPublicAddress('2606:4700:4700::1111')).toBe(false);
    expect(isNonPublicAddress('172.16.5.4')).toBe(true);
    expect(isNonPublicAddress('fe80::1')).toBe(true);
    expect(isNonPublicAddress('fd00::1')).toBe(true);
  });

  test('refuses non-http schemes', async () => {
    await expect(
      httpStep.execute({ id: 'h', kind: 'http', method: 'GET', url: 'file:///etc/passwd' }, ctx(true)),
    ).rejects.toThrow(/http or https/);
  });
});

describe('circuit steps', () => {
  const leaf: CircuitDefinition = {
    query_schema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
    steps: [{ id: 'hi', kind: 'template', template: 'hi {{input.who}}' }],
  };

  test("embed another circuit's primary version; output is its result_blob; it costs 1 plus its steps", async () => {
    const inner = await makeRunnableCircuit(owner, leaf);
    const result = await run(
      {
        query_schema: anyObject,
        steps: [
          { id: 'name', kind: 'template', template: '{{input.name}}' },
          { id: 'inner', kind: 'circuit', circuit_uid: inner.circuit.uid, input: { who: '{{steps.name.output}}!' } },
        ],
        output: 'steps.inner.output.output',
      },
      { name: 'Ada' },
    );
    expect(result.state).toBe('COMPLETED');
    expect(result.result_blob.output).toBe('hi Ada!');
    expect(result.result_blob.steps.inner).toMatchObject({
      kind: 'circuit',
      credits: 1,
      output: { output: 'hi Ada!', steps: { hi: { kind: 'template', output: 'hi Ada!' } } },
    });
    expect(Number((await CreditLedger.findOne({ where: { run_uid: result.uid } }))!.cost)).toBe(2);
  });

  test('a pinned version_uid runs that version; an input failing its query schema fails the run', async () => {
    const inner = await makeRunnableCircuit(owner, leaf);
    const pinned = await run({
      query_schema: anyObject,
      steps: [
        {
          id: 'inner',
          kind: 'circuit',
          circuit_uid: inner.circuit.uid,
          version_uid: inner.version.uid,
          input: { who: 'x' },
        },
      ],
    });
    expect(pinned.result_blob.output.output).toBe('hi x');
    const bad = await run({
      query_schema: anyObject,
      steps: [{ id: 'inner', kind: 'circuit', circuit_uid: inner.circuit.uid, input: {} }],
    });
    expect(bad.state).toBe('EXCEPTION');
    expect((await CircuitRun.findByPk(bad.uid))!.failure_reason).toContain('input.who is required');
  });

  test('nesting deeper than 5 embedded circuits fails the run', async () => {
    let below = await makeRunnableCircuit(owner, leaf);
    const chain = [below];
    for (let i = 0; i < 5; i++) {
      below = await makeRunnableCircuit(owner, {
        query_schema: anyObject,
        steps: [{ id: 'down', kind: 'circuit', circuit_uid: below.circuit.uid, input: { who: 'deep' } }],
      });
      chain.push(below);
    }
    // chain[5] embeds 5 levels below it: allowed. One more level is too deep.
    const ok = await submitRun(t, owner.token, chain[5].adaptorUid, { input: {} });
    expect((await waitForRun(t, ok.body.payload.uid, owner.token)).state).toBe('COMPLETED');
    const tooDeep = await run({
      query_schema: anyObject,
      steps: [{ id: 'down', kind: 'circuit', circuit_uid: chain[5].circuit.uid, input: {} }],
    });
    expect(tooDeep.state).toBe('EXCEPTION');
    expect((await CircuitRun.findByPk(tooDeep.uid))!.failure_reason).toContain('deeper than 5');
  });
});

test('without an output expression the last step is the output; a transform that loops forever fails its step', async () => {
  const plain = await run({
    query_schema: anyObject,
    steps: [
      { id: 'one', kind: 'template', template: '1' },
      { id: 'two', kind: 'transform', expression: '$number(steps.one.output) + 1' },
    ],
  });
  expect(plain.result_blob.output).toBe(2);
  const looping = await run({
    query_schema: anyObject,
    steps: [{ id: 'loop', kind: 'transform', expression: '($f := function($x){ $f($x) }; $f(1))' }],
  });
  expect(looping.state).toBe('EXCEPTION');
});
