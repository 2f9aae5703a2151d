import type { ServerResponse } from 'node:http';
import { QueryTypes } from 'sequelize';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, startHttpTarget, submitRun, waitForRun } from './support/run-factories';
import { startFakeOpenAI } from './support/fake-openai';
import { CreditLedger } from '../src/models/CreditLedger';
import { CircuitRun } from '../src/models/CircuitRun';
import { OPENAI_API_KEY_UNSET } from '../src/config';
import type { CircuitDefinition } from '../src/domain/definition';
import { describeStep } from '../src/engine/explain';
import { executeDefinition, type ExecutionContext } from '../src/engine/run-executor';
import { ExecutionFailure, type StepEvent } from '../src/engine/run-control';
import { AttemptError, backoffMs, parseRetryAfter, parseStepPolicy, withStepPolicy } from '../src/engine/step-policy';
import { engineDeps } from './support/engine-deps';

const KEY = 'sk-live-secret-9f8e7d6c';

let t: TestApp;
let openai: Awaited<ReturnType<typeof startFakeOpenAI>>;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
let owner: TestUser;
/** Requests the target saw, by path, with when each arrived (ms, at the upstream). */
const seen = new Map<string, number[]>();
const held: ServerResponse[] = [];

beforeAll(async () => {
  openai = await startFakeOpenAI({
    fail: (request, { index }) => {
      if (request.model === 'refusing-model') {
        return {
          status: 400,
          message: `This model's maximum context length is 10 tokens. You sent key ${KEY} (or sk-proj-ZZZ999) with header Authorization: Bearer tok.abc-123, see https://platform.example/docs`,
        };
      }
      if (request.model === 'flaky-model' && openai.requests.filter((r) => r.body.model === 'flaky-model').length === 1)
        return { status: 500, message: 'The server had an error while processing your request' };
      if (request.model === 'keyed-model')
        return { status: 401, message: `Incorrect API key provided: ${'unset'} (request ${index})` };
      return undefined;
    },
  });
  target = await startHttpTarget((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const times = seen.get(url.pathname) ?? [];
    times.push(Date.now());
    seen.set(url.pathname, times);
    const n = times.length;
    if (url.pathname.startsWith('/flaky')) {
      if (n === 1) return void res.writeHead(503, { 'content-type': 'text/plain' }).end('busy, try later');
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ attempt: n }));
    }
    if (url.pathname.startsWith('/limited')) {
      if (n === 1)
        return void res.writeHead(429, { 'retry-after': url.searchParams.get('after') ?? '1' }).end('slow down');
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    }
    if (url.pathname.startsWith('/hang')) return void held.push(res);
    if (url.pathname.startsWith('/bad')) {
      return void res
        .writeHead(400, { 'content-type': 'text/plain', 'x-secret-header': 'hv-123' })
        .end(`bad input:\u0007 field "q"\r\nrouted via 10.1.2.3 ${'x'.repeat(400)}`);
    }
    res.writeHead(404).end();
  });
  t = await startTestApp({ openaiBaseUrl: openai.baseUrl, openaiApiKey: KEY });
  owner = await makeUser({ credits: 100 });
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await t.close();
  await target.close();
  await openai.close();
});

const anyObject: CircuitDefinition['query_schema'] = { type: 'object' };
let paths = 0;
/** A path of the target no other test uses. */
const fresh = (prefix: string) => `/${prefix}-${++paths}`;

async function run(definition: CircuitDefinition, input: Record<string, unknown> = {}) {
  const { adaptorUid } = await makeRunnableCircuit(owner, definition);
  const submitted = await submitRun(t, owner.token, adaptorUid, { input });
  expect(submitted.status).toBe(200);
  return waitForRun(t, submitted.body.payload.uid, owner.token);
}

/** The run's step events, from its durable log (complete once the run is terminal). */
async function stepEvents(uid: string): Promise<StepEvent[]> {
  const rows = await CircuitRun.sequelize!.query<{ data: StepEvent }>(
    "SELECT data FROM circuit_run_events WHERE run_uid = $1 AND kind = 'step' ORDER BY seq",
    { bind: [uid], type: QueryTypes.SELECT },
  );
  return rows.map((r) => r.data);
}

describe('http', () => {
  test('503 then 200: retried once after a back-off, the run completes, a retrying event is logged', async () => {
    const path = fresh('flaky');
    const result = await run({
      query_schema: anyObject,
      steps: [
        {
          id: 'get',
          kind: 'http',
          method: 'GET',
          url: `${target.url}${path}`,
          retry: { max_attempts: 3, initial_backoff_ms: 100 },
        },
      ],
    });
    expect(result.state).toBe('COMPLETED');
    expect(result.result_blob.output).toEqual({ attempt: 2 });
    expect(seen.get(path)).toHaveLength(2);
    const events = await stepEvents(result.uid);
    expect(events.map((e) => e.status)).toEqual(['started', 'retrying', 'completed']);
    const retrying = events[1];
    expect(retrying).toMatchObject({
      step_id: 'get',
      kind: 'http',
      attempt: 1,
      error: 'upstream answered 503: busy, try later',
      started_at: expect.any(String),
      retry_at: expect.any(String),
    });
    expect(Date.parse(retrying.retry_at!)).toBeGreaterThanOrEqual(Date.parse(retrying.started_at));
    // The second request came after the back-off announced (initial 100 ms, equal jitter: at least 50 ms).
    const [first, second] = seen.get(path)!;
    expect(second - first).toBeGreaterThanOrEqual(45);
  });

  test('429 with Retry-After: 1 is honoured: the second request arrives about a second after the first', async () => {
    const path = fresh('limited');
    const result = await run({
      query_schema: anyObject,
      steps: [
        {
          id: 'get',
          kind: 'http',
          method: 'GET',
          url: `${target.url}${path}?after=1`,
          retry: { max_attempts: 2, initial_backoff_ms: 100 },
        },
      ],
    });
    expect(result.state).toBe('COMPLETED');
    const times = seen.get(path)!;
    expect(times).toHaveLength(2);
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(950);
    const retrying = (await stepEvents(result.uid)).find((e) => e.status === 'retrying')!;
    expect(retrying).toMatchObject({ attempt: 1, error: 'upstream answered 429: slow down' });
  });

  test('a Retry-After beyond max_backoff_ms fails the step at once, saying so', async () => {
    const path = fresh('limited');
    const result = await run({
      query_schema: anyObject,
      steps: [
        {
          id: 'get',
          kind: 'http',
          method: 'GET',
          url: `${target.url}${path}?after=120`,
          retry: { max_attempts: 5, initial_backoff_ms: 100 },
        },
      ],
    });
    expect(result.state).toBe('EXCEPTION');
    expect(result.error).toEqual({
      code: 'StepFailed',
      step_id: 'get',
      message: 'http step get: upstream answered 429 and asked to retry after 120 s, beyond max_backoff_ms 30000',
    });
    expect(seen.get(path)).toHaveLength(1);
    expect((await stepEvents(result.uid)).map((e) => e.status)).toEqual(['started', 'failed']);
  });

  test('a per-attempt timeout: each attempt is cut off after timeout_ms, then the step fails saying it timed out', async () => {
    const path = fresh('hang');
    const result = await run({
      query_schema: anyObject,
      steps: [
        {
          id: 'slow',
          kind: 'http',
          method: 'GET',
          url: `${target.url}${path}`,
          timeout_ms: 200,
          retry: { max_attempts: 2, initial_backoff_ms: 100 },
        },
      ],
    });
    expect(result.state).toBe('EXCEPTION');
    expect(seen.get(path)).toHaveLength(2);
    expect(result.error.code).toBe('StepFailed');
    expect(result.error.message).toMatch(
      /^http step slow: request to 127\.0\.0\.1:\d+ timed out after 200 ms \(timeout_ms per attempt\) \(after 2 attempts\)$/,
    );
    const events = await stepEvents(result.uid);
    expect(events.map((e) => e.status)).toEqual(['started', 'retrying', 'failed']);
    expect(events[1].error).toMatch(/timed out after 200 ms/);
  });

  test('a 400 is not retried; the message quotes the start of the body as one bounded line, no header value or internal address', async () => {
    const path = fresh('bad');
    const result = await run({
      query_schema: anyObject,
      steps: [
        {
          id: 'post',
          kind: 'http',
          method: 'POST',
          url: `${target.url}${path}`,
          body: { q: 1 },
          retry: { max_attempts: 3, initial_backoff_ms: 100 },
        },
      ],
    });
    expect(result.state).toBe('EXCEPTION');
    expect(seen.get(path)).toHaveLength(1);
    const message: string = result.error.message;
    expect(
      message.startsWith('http step post: upstream answered 400: bad input: field "q" routed via [address] xxx'),
    ).toBe(true);
    expect(message.length).toBeLessThanOrEqual('http step post: upstream answered 400: '.length + 200);
    // eslint-disable-next-line no-control-regex
    expect(message).not.toMatch(/[\u0000-\u001f]|10\.1\.2\.3|hv-123/);
    expect((await stepEvents(result.uid)).map((e) => e.status)).toEqual(['started', 'failed']);
  });
});

describe('llm', () => {
  test("the provider's error message reaches the owner's run error, without the key or a bearer secret", async () => {
    const before = openai.requests.length;
    const result = await run({
      query_schema: anyObject,
      steps: [{ id: 'ask', kind: 'llm', model: 'refusing-model', messages: [{ role: 'user', content: 'hi' }] }],
    });
    expect(result.state).toBe('EXCEPTION');
    expect(openai.requests.length - before).toBe(1); // a 400 is not retried
    const message: string = result.error.message;
    expect(message).toMatch(
      /^llm step ask: model call failed \(HTTP 400\): This model's maximum context length is 10 tokens\. You sent key \[redacted\] \(or sk-\[redacted\]\) with header Authorization: Bearer \[redacted\], see https:\/\/platform\.example\/docs$/,
    );
    expect(message).not.toContain(KEY);
    expect(message).not.toMatch(/tok\.abc-123|ZZZ999/);
    const anonymous = await t.rest('GET', `/circuit-runs/${result.uid}`);
    expect(anonymous.body.payload?.error).toBeUndefined();
  });

  test('500 then a reply: retried after a retrying event; the step is charged for the tokens the attempts used', async () => {
    const result = await run({
      query_schema: anyObject,
      steps: [
        {
          id: 'ask',
          kind: 'llm',
          model: 'flaky-model',
          messages: [{ role: 'user', content: 'hi' }],
          retry: { initial_backoff_ms: 100 },
        },
      ],
    });
    expect(result.state).toBe('COMPLETED');
    expect(openai.requests.filter((r) => r.body.model === 'flaky-model')).toHaveLength(2);
    expect(result.result_blob.output).toBe('echo: hi');
    // The failed attempt reported no usage; the successful one 1500 tokens: 2 credits.
    expect(result.result_blob.steps.ask).toMatchObject({
      credits: 2,
      usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 },
    });
    expect(Number((await CreditLedger.findOne({ where: { run_uid: result.uid } }))!.cost)).toBe(3);
    const events = await stepEvents(result.uid);
    expect(events.map((e) => e.status)).toEqual(['started', 'retrying', 'completed']);
    expect(events[1]).toMatchObject({
      attempt: 1,
      error: 'model call failed (HTTP 500): The server had an error while processing your request',
    });
  });

  test('without OPENAI_API_KEY the message says the key is not set, and the call is not retried', async () => {
    for (const openaiApiKey of [OPENAI_API_KEY_UNSET, '']) {
      const before = openai.requests.length;
      const deps = engineDeps(t.app, { openaiApiKey });
      const context: ExecutionContext = {
        run: { uid: '00000000-0000-4000-8000-000000000001', userUid: owner.user.uid, circuitUid: 'c', versionUid: 'v' },
        deps,
        signal: new AbortController().signal,
        depth: 0,
        budget: { maxSteps: 1000, maxResultBytes: 4 * 1024 * 1024, hold: async () => true },
      };
      const error = await executeDefinition(
        {
          query_schema: anyObject,
          steps: [{ id: 'ask', kind: 'llm', model: 'keyed-model', messages: [{ role: 'user', content: 'x' }] }],
        },
        {},
        context,
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ExecutionFailure);
      expect((error as ExecutionFailure).message).toBe(
        'llm step ask: model call failed: OPENAI_API_KEY is not set (the model endpoint answered 401: Incorrect API key provided: unset (request ' +
          before +
          '))',
      );
      expect(openai.requests.length - before).toBe(1);
      expect(openai.requests.at(-1)!.authorization).toBe(`Bearer ${OPENAI_API_KEY_UNSET}`);
    }
  });
});

describe('circuit', () => {
  test('an embedded run that failed on a retryable failure is run again; timeout_ms bounds each embedded run', async () => {
    const path = fresh('flaky');
    const inner = await makeRunnableCircuit(owner, {
      query_schema: anyObject,
      steps: [{ id: 'get', kind: 'http', method: 'GET', url: `${target.url}${path}` }],
    });
    const retried = await run({
      query_schema: anyObject,
      steps: [
        {
          id: 'inner',
          kind: 'circuit',
          circuit_uid: inner.circuit.uid,
          retry: { max_attempts: 2, initial_backoff_ms: 100 },
        },
      ],
    });
    expect(retried.state).toBe('COMPLETED');
    expect(seen.get(path)).toHaveLength(2);
    expect(retried.result_blob.output.output).toEqual({ attempt: 2 });
    expect((await stepEvents(retried.uid)).find((e) => e.status === 'retrying')).toMatchObject({
      step_id: 'inner',
      attempt: 1,
      error: expect.stringContaining('upstream answered 503: busy, try later'),
    });

    const bad = await makeRunnableCircuit(owner, {
      query_schema: anyObject,
      steps: [{ id: 'post', kind: 'http', method: 'GET', url: `${target.url}${fresh('bad')}` }],
    });
    const notRetried = await run({
      query_schema: anyObject,
      steps: [
        {
          id: 'inner',
          kind: 'circuit',
          circuit_uid: bad.circuit.uid,
          retry: { max_attempts: 3, initial_backoff_ms: 100 },
        },
      ],
    });
    expect(notRetried.state).toBe('EXCEPTION');
    expect((await stepEvents(notRetried.uid)).map((e) => e.status)).toEqual(['started', 'failed']);

    const hang = fresh('hang');
    const slow = await makeRunnableCircuit(owner, {
      query_schema: anyObject,
      steps: [{ id: 'wait', kind: 'http', method: 'GET', url: `${target.url}${hang}` }],
    });
    const timedOut = await run({
      query_schema: anyObject,
      steps: [{ id: 'inner', kind: 'circuit', circuit_uid: slow.circuit.uid, timeout_ms: 300 }],
    });
    expect(timedOut.state).toBe('EXCEPTION');
    expect(timedOut.error.message).toBe(
      `circuit step inner: embedded circuit ${slow.circuit.name} timed out after 300 ms (timeout_ms per attempt)`,
    );
    expect(seen.get(hang)).toHaveLength(1);
  });
});

describe('the policy runner', () => {
  const step = { id: 's', kind: 'http' };
  const retryable = () => new AttemptError('s', 'upstream answered 503', { retryable: true });

  test('back-off: exponential, capped, equal jitter; Retry-After as seconds or an HTTP date', () => {
    const policy = { initialBackoffMs: 100, maxBackoffMs: 1000 };
    expect([1, 2, 3, 4, 5].map((n) => backoffMs(policy, n, () => 0))).toEqual([50, 100, 200, 400, 500]);
    expect([1, 2, 3, 4, 5].map((n) => backoffMs(policy, n, () => 0.999999))).toEqual([100, 200, 400, 800, 1000]);
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('1', now)).toBe(1000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  test('defaults per kind, and explain words a policy only when the step sets one', () => {
    expect(parseStepPolicy({ id: 'a', kind: 'http' }, 'http')).toMatchObject({
      maxAttempts: 1,
      timeoutMs: 30000,
      initialBackoffMs: 1000,
      maxBackoffMs: 30000,
    });
    expect(parseStepPolicy({ id: 'a', kind: 'llm' }, 'llm')).toMatchObject({ maxAttempts: 3, timeoutMs: 120000 });
    expect(parseStepPolicy({ id: 'a', kind: 'circuit' }, 'circuit').timeoutMs).toBeUndefined();
    expect(() => parseStepPolicy({ id: 'a', kind: 'http', retry: { max_attempts: 11 } }, 'http')).toThrow(
      'retry.max_attempts must be an integer from 1 to 10',
    );
    expect(describeStep({ id: 'a', kind: 'http', method: 'GET', url: 'https://example.com' })).toBe(
      'Calls GET "https://example.com" and reads the response.',
    );
    expect(
      describeStep({
        id: 'a',
        kind: 'http',
        method: 'GET',
        url: 'https://example.com',
        retry: { max_attempts: 3 },
        timeout_ms: 5000,
      }),
    ).toBe(
      'Calls GET "https://example.com" and reads the response. Retried up to 3 attempts; each attempt times out after 5 s.',
    );
  });

  test('the injected clock decides the waits; retry_at is now + the wait', async () => {
    const waits: number[] = [];
    const events: StepEvent[] = [];
    let calls = 0;
    const result = await withStepPolicy(
      step,
      { signal: new AbortController().signal, observer: { step: (e) => events.push(e), output: () => {} } },
      { maxAttempts: 3, initialBackoffMs: 100, maxBackoffMs: 1000 },
      async () => {
        if (++calls < 3) throw retryable();
        return 'done';
      },
      {
        startedAt: '2025-01-01T00:00:00.000Z',
        clock: {
          now: () => 0,
          random: () => 0,
          sleep: async (ms) => {
            waits.push(ms);
          },
        },
      },
    );
    expect(result).toBe('done');
    expect(waits).toEqual([50, 100]);
    expect(events.map((e) => [e.status, e.attempt, e.retry_at, e.started_at])).toEqual([
      ['retrying', 1, new Date(50).toISOString(), '2025-01-01T00:00:00.000Z'],
      ['retrying', 2, new Date(100).toISOString(), '2025-01-01T00:00:00.000Z'],
    ]);
  });

  test("the back-off ends at once when the run's signal aborts", async () => {
    const controller = new AbortController();
    let announced: () => void = () => {};
    const retrying = new Promise<void>((resolve) => {
      announced = resolve;
    });
    let calls = 0;
    const outcome = withStepPolicy(
      step,
      { signal: controller.signal, observer: { step: () => announced(), output: () => {} } },
      { maxAttempts: 2, initialBackoffMs: 60_000, maxBackoffMs: 600_000 },
      async () => {
        calls++;
        throw retryable();
      },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    await retrying;
    controller.abort();
    // A minute-long back-off would outlast jest's timeout: this resolves only because the wait ended.
    expect(await outcome).toMatchObject({ message: 'stopped while waiting to retry: the run ended' });
    expect(calls).toBe(1);
  });
});
