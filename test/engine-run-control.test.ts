import type { ServerResponse } from 'node:http';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, startHttpTarget } from './support/run-factories';
import { startFakeOpenAI } from './support/fake-openai';
import type { CircuitDefinition } from '../src/domain/definition';
import { executeDefinition, type ExecutionContext } from '../src/engine/run-executor';
import { ExecutionFailure, RunAborted, type RunBudget, type StepEvent } from '../src/engine/run-control';
import type { EngineDeps } from '../src/engine/ports';
import { engineDeps } from './support/engine-deps';

let t: TestApp;
let openai: Awaited<ReturnType<typeof startFakeOpenAI>>;
let slowOpenai: Awaited<ReturnType<typeof startFakeOpenAI>>;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const held: ServerResponse[] = [];
let owner: TestUser;

const LONG_REPLY = 'The quick brown fox jumps over the lazy dog. '.repeat(6);

beforeAll(async () => {
  openai = await startFakeOpenAI({ reply: () => LONG_REPLY, chunkSize: 3, chunkDelayMs: 5 });
  slowOpenai = await startFakeOpenAI({ reply: () => 'x'.repeat(1000), chunkSize: 1, chunkDelayMs: 200 });
  target = await startHttpTarget((req, res) => {
    if (req.url?.startsWith('/hold')) return void held.push(res);
    res.writeHead(503).end('down');
  });
  t = await startTestApp({ openaiBaseUrl: openai.baseUrl, openaiApiKey: 'sk-secret-key-123', stepCpuMs: 300 });
  owner = await makeUser({ credits: 100 });
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await t.close();
  await target.close();
  await openai.close();
  await slowOpenai.close();
});

const anyObject: CircuitDefinition['query_schema'] = { type: 'object' };
const budget = (over: Partial<RunBudget> = {}): RunBudget => ({
  maxSteps: 1000,
  maxResultBytes: 4 * 1024 * 1024,
  hold: async () => true,
  ...over,
});

function context(over: Partial<ExecutionContext> = {}, deps: EngineDeps = engineDeps(t.app)): ExecutionContext {
  return {
    run: { uid: '00000000-0000-4000-8000-000000000001', userUid: owner.user.uid, circuitUid: 'c', versionUid: 'v' },
    deps,
    signal: new AbortController().signal,
    depth: 0,
    budget: budget(),
    ...over,
  };
}

/** The test app's engine deps with some settings changed. */
function withConfig(config: Partial<EngineDeps['config']>): EngineDeps {
  return engineDeps(t.app, config);
}

function recorder() {
  const steps: StepEvent[] = [];
  const outputs: { stepId: string; delta: string; at: number }[] = [];
  return {
    steps,
    outputs,
    observer: {
      step: (e: StepEvent) => steps.push(e),
      output: (stepId: string, delta: string) => outputs.push({ stepId, delta, at: Date.now() }),
    },
  };
}

async function failure(promise: Promise<unknown>): Promise<ExecutionFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ExecutionFailure);
  return error as ExecutionFailure;
}

test('an llm step streams: coalesced output deltas add up to the output, usage is recorded, step events bracket it', async () => {
  const events = recorder();
  const result = await executeDefinition(
    {
      query_schema: anyObject,
      steps: [{ id: 'ask', kind: 'llm', model: 'm', messages: [{ role: 'user', content: 'hi' }] }],
    },
    {},
    context({ observer: events.observer }),
  );
  expect(result.output).toBe(LONG_REPLY);
  expect(result.steps.ask).toMatchObject({
    credits: 2,
    usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 },
  });
  expect(openai.requests.at(-1)!.body).toMatchObject({
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: 1024,
  });
  expect(events.outputs.map((o) => o.delta).join('')).toBe(LONG_REPLY);
  expect(events.outputs.length).toBeGreaterThan(1);
  // coalesced: at most about one event per 50 ms
  const span = events.outputs.at(-1)!.at - events.outputs[0].at;
  expect(events.outputs.length).toBeLessThanOrEqual(Math.ceil(span / 50) + 2);
  expect(events.steps.map((e) => [e.step_id, e.status])).toEqual([
    ['ask', 'started'],
    ['ask', 'completed'],
  ]);
  expect(events.steps[1]).toMatchObject({
    kind: 'llm',
    credits: 2,
    started_at: expect.any(String),
    ended_at: expect.any(String),
  });
});

test('an llm step holds credits for its prompt and max_tokens first; a refused hold ends the run InsufficientCredits', async () => {
  const asked: number[] = [];
  const ok = await executeDefinition(
    {
      query_schema: anyObject,
      steps: [{ id: 'ask', kind: 'llm', model: 'm', max_tokens: 2500, messages: [{ role: 'user', content: 'hi' }] }],
    },
    {},
    context({
      budget: budget({
        hold: async (n) => {
          asked.push(n);
          return true;
        },
      }),
    }),
  );
  expect(ok.output).toBe(LONG_REPLY);
  expect(asked).toEqual([3]);
  const before = openai.requests.length;
  const refused = await failure(
    executeDefinition(
      {
        query_schema: anyObject,
        steps: [{ id: 'ask', kind: 'llm', model: 'm', messages: [{ role: 'user', content: 'hi' }] }],
      },
      {},
      context({ budget: budget({ hold: async () => false }) }),
    ),
  );
  expect(refused.code).toBe('InsufficientCredits');
  expect(refused.stepId).toBe('ask');
  expect(openai.requests.length).toBe(before); // the model was never called
});

test('a failure message names the kind and step and carries no key, stack or address', async () => {
  const down = await failure(
    executeDefinition(
      { query_schema: anyObject, steps: [{ id: 'fetch', kind: 'http', method: 'GET', url: `${target.url}/down` }] },
      {},
      context(),
    ),
  );
  expect(down.message).toBe('http step fetch: upstream answered 503: down');
  expect(down.code).toBe('StepFailed');
  const refused = await failure(
    executeDefinition(
      { query_schema: anyObject, steps: [{ id: 'fetch', kind: 'http', method: 'GET', url: 'http://127.0.0.1:1/' }] },
      {},
      context(),
    ),
  );
  expect(refused.message).toMatch(/^http step fetch: request to 127\.0\.0\.1:1 failed: the connection was refused$/);
  const shape = await failure(
    executeDefinition(
      { query_schema: anyObject, steps: [{ id: 'shape', kind: 'transform', expression: '$error("boom")' }] },
      {},
      context(),
    ),
  );
  expect(shape.message).toBe('transform step shape: JSONata: boom');
  const broken = await startFakeOpenAI({ status: 401 });
  try {
    const deps = withConfig({ openaiBaseUrl: broken.baseUrl });
    const model = await failure(
      executeDefinition(
        {
          query_schema: anyObject,
          steps: [{ id: 'ask', kind: 'llm', model: 'm', messages: [{ role: 'user', content: 'x' }] }],
        },
        {},
        context({}, deps),
      ),
    );
    expect(model.message).toBe('llm step ask: model call failed (HTTP 401): fake failure');
  } finally {
    await broken.close();
  }
  const unreachable = withConfig({ openaiBaseUrl: 'http://127.0.0.1:1/v1' });
  const gone = await failure(
    executeDefinition(
      {
        query_schema: anyObject,
        steps: [
          {
            id: 'ask',
            kind: 'llm',
            model: 'm',
            messages: [{ role: 'user', content: 'x' }],
            retry: { max_attempts: 2, initial_backoff_ms: 100 },
          },
        ],
      },
      {},
      context({}, unreachable),
    ),
  );
  expect(gone.message).toBe(
    'llm step ask: model call failed: the model endpoint could not be reached (after 2 attempts)',
  );
  for (const f of [down, refused, shape, gone]) expect(f.message).not.toMatch(/sk-secret|\bat \/|Error:/);
});

test('step events: a failing step is reported failed with its message, and steps still in flight as stopped', async () => {
  const events = recorder();
  const before = held.length;
  const running = executeDefinition(
    {
      query_schema: anyObject,
      steps: [
        { id: 'wait', kind: 'http', method: 'GET', url: `${target.url}/hold-events` },
        { id: 'first', kind: 'template', template: 'x' },
        { id: 'boom', kind: 'transform', expression: '$error("no " & steps.first.output)' },
      ],
    },
    {},
    context({ observer: events.observer }),
  );
  // The failing step may end the run before the http step is even held: take the outcome at once.
  const failed = failure(running);
  const deadline = Date.now() + 10_000;
  while (held.length === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  const error = await failed;
  expect(error).toMatchObject({ code: 'StepFailed', stepId: 'boom', message: 'transform step boom: JSONata: no x' });
  const byStep = (id: string) => events.steps.filter((e) => e.step_id === id).map((e) => e.status);
  expect(byStep('first')).toEqual(['started', 'completed']);
  expect(byStep('boom')).toEqual(['started', 'failed']);
  expect(events.steps.find((e) => e.step_id === 'boom' && e.status === 'failed')!.error).toBe(
    'transform step boom: JSONata: no x',
  );
  expect(byStep('wait')).toEqual(['started', 'failed']);
  expect(events.steps.find((e) => e.step_id === 'wait' && e.status === 'failed')!.error).toBe(
    'stopped: another step failed',
  );
});

describe('abort: the signal stops http, llm and embedded circuit steps within 1 s', () => {
  async function abortAfterStart(definition: CircuitDefinition, ready: () => boolean, reason: RunAborted) {
    const controller = new AbortController();
    const events = recorder();
    const running = executeDefinition(
      definition,
      {},
      context({ signal: controller.signal, observer: events.observer }),
    );
    const deadline = Date.now() + 10_000;
    while (!ready() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(ready()).toBe(true);
    controller.abort(reason);
    const error = await failure(running);
    return { error, events };
  }

  test('http', async () => {
    const before = held.length;
    const { error, events } = await abortAfterStart(
      { query_schema: anyObject, steps: [{ id: 'slow', kind: 'http', method: 'GET', url: `${target.url}/hold` }] },
      () => held.length > before,
      new RunAborted('Canceled'),
    );
    // The abort reached the request: had it not, the held upstream would keep the step (and this test) waiting.
    expect(error.code).toBe('Canceled');
    expect(events.steps.at(-1)).toMatchObject({ step_id: 'slow', status: 'failed' });
  });

  test('llm (the stream to the model is closed)', async () => {
    const deps = withConfig({ openaiBaseUrl: slowOpenai.baseUrl });
    const controller = new AbortController();
    const running = executeDefinition(
      {
        query_schema: anyObject,
        steps: [{ id: 'ask', kind: 'llm', model: 'm', messages: [{ role: 'user', content: 'x' }] }],
      },
      {},
      context({ signal: controller.signal }, deps),
    );
    const deadline = Date.now() + 10_000;
    while (slowOpenai.state.open === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const abortedAt = Date.now();
    controller.abort(new RunAborted('DeadlineExceeded'));
    const error = await failure(running);
    expect(error.code).toBe('DeadlineExceeded');
    // The positive signal: the model server sees its stream closed (it never ends one by itself).
    while (slowOpenai.state.open > 0 && Date.now() - abortedAt < 10_000)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(slowOpenai.state.open).toBe(0);
  });

  test('an embedded circuit whose step is in flight', async () => {
    const inner = await makeRunnableCircuit(owner, {
      query_schema: anyObject,
      steps: [{ id: 'wait', kind: 'http', method: 'GET', url: `${target.url}/hold-inner` }],
    });
    const before = held.length;
    const { error } = await abortAfterStart(
      { query_schema: anyObject, steps: [{ id: 'outer', kind: 'circuit', circuit_uid: inner.circuit.uid, input: {} }] },
      () => held.length > before,
      new RunAborted('Canceled'),
    );
    expect(error.code).toBe('Canceled');
  });
});

describe('budgets', () => {
  test('steps are counted across embedded runs; a 100×100 fan-out stops at the limit quickly', async () => {
    const leaf = await makeRunnableCircuit(owner, {
      query_schema: anyObject,
      steps: Array.from({ length: 100 }, (_, i) => ({
        id: `s${i}`,
        kind: 'template' as const,
        template: `{{input.n}}-${i}`,
      })),
    });
    const fanOut: CircuitDefinition = {
      query_schema: anyObject,
      steps: Array.from({ length: 100 }, (_, i) => ({
        id: `c${i}`,
        kind: 'circuit' as const,
        circuit_uid: leaf.circuit.uid,
        input: { n: String(i) },
      })),
    };
    const held: number[] = [];
    const started = Date.now();
    const rssBefore = process.memoryUsage().rss;
    const error = await failure(
      executeDefinition(
        fanOut,
        {},
        context({
          budget: budget({
            hold: async (n) => {
              held.push(n);
              return true;
            },
          }),
        }),
      ),
    );
    expect(error.code).toBe('StepFailed');
    expect(error.message).toMatch(/reached its limit of 1000 steps/);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
    expect(held.length).toBeLessThanOrEqual(100);

    const small = await failure(executeDefinition(fanOut, {}, context({ budget: budget({ maxSteps: 50 }) })));
    expect(small.message).toMatch(/reached its limit of 50 steps \(embedded runs included\)/);
  });

  test('a result over RUN_MAX_RESULT_BYTES fails the run', async () => {
    const big = await failure(
      executeDefinition(
        { query_schema: anyObject, steps: [{ id: 'pad', kind: 'transform', expression: '$pad("", 20000, "x")' }] },
        {},
        context({ budget: budget({ maxResultBytes: 10_000 }) }),
      ),
    );
    expect(big.code).toBe('StepFailed');
    expect(big.message).toMatch(/larger than 10000 bytes/);
    const many = await failure(
      executeDefinition(
        {
          query_schema: anyObject,
          steps: Array.from({ length: 5 }, (_, i) => ({
            id: `p${i}`,
            kind: 'transform' as const,
            expression: '$pad("", 3000, "x")',
          })),
        },
        {},
        context({ budget: budget({ maxResultBytes: 10_000 }) }),
      ),
    );
    expect(many.message).toMatch(/result would be larger than 10000 bytes/);
  });

  test('an embedded circuit step holds its base credit; a refused hold ends the run InsufficientCredits', async () => {
    const leaf = await makeRunnableCircuit(owner, {
      query_schema: anyObject,
      steps: [{ id: 'hi', kind: 'template', template: 'hi' }],
    });
    const error = await failure(
      executeDefinition(
        {
          query_schema: anyObject,
          steps: [{ id: 'inner', kind: 'circuit', circuit_uid: leaf.circuit.uid, input: {} }],
        },
        {},
        context({ budget: budget({ hold: async () => false }) }),
      ),
    );
    expect(error.code).toBe('InsufficientCredits');
    expect(error.message).toMatch(/^circuit step inner: the balance cannot cover the 1 credit/);
  });
});
