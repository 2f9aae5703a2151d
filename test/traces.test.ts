import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { QueryTypes } from 'sequelize';
import { CircuitRun } from '../src/models/CircuitRun';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeUser, TestUser } from './support/factories';
import { startFakeOpenAI } from './support/fake-openai';
import { restClient } from './support/http';
import {
  makeRunnableCircuit,
  ServiceProcess,
  spawnServiceProcess,
  startHttpTarget,
  waitForRun,
} from './support/run-factories';

/**
 * Traces, through a spawned `npm start` process (API thread + run worker thread; the
 * OpenTelemetry SDK is process-global, so not in jest's process) exporting OTLP/HTTP JSON to an
 * in-test receiver.
 */
jest.setTimeout(120_000);

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 1 INTERNAL, 3 CLIENT. */
  kind?: number;
  attributes?: { key: string; value: OtlpValue }[];
}

let t: TestApp;
let owner: TestUser;
let service: ServiceProcess | undefined;
let deadCollector: ServiceProcess | undefined;
let collector: http.Server;
let collectorUrl: string;
const spans: OtlpSpan[] = [];
let upstream: Awaited<ReturnType<typeof startHttpTarget>>;
let receiver: Awaited<ReturnType<typeof startHttpTarget>>;
let openai: Awaited<ReturnType<typeof startFakeOpenAI>>;

type Plain = string | number | boolean | Plain[] | undefined;
const valueOf = (value: OtlpValue): Plain => {
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
};
const attr = (span: OtlpSpan, key: string): Plain => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value ? valueOf(value) : undefined;
};

beforeAll(async () => {
  t = await startTestApp({ runWorker: false });
  owner = await makeUser({ credits: 1000 });
  collector = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as {
          resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[];
        };
        for (const resource of body.resourceSpans ?? [])
          for (const scope of resource.scopeSpans ?? []) spans.push(...(scope.spans ?? []));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  upstream = await startHttpTarget((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  receiver = await startHttpTarget((_req, res) => {
    res.writeHead(200).end();
  });
  openai = await startFakeOpenAI({ usage: { prompt_tokens: 120, completion_tokens: 30 } });
  service = await spawnServiceProcess('api', t.databaseUrl, {
    RUN_WORKER: 'true',
    OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OPENAI_BASE_URL: openai.baseUrl,
    OPENAI_API_KEY: 'test-key',
  });
});
afterAll(async () => {
  await service?.kill();
  await deadCollector?.kill();
  await Promise.all([upstream?.close(), receiver?.close(), openai?.close()]);
  await new Promise((resolve) => collector?.close(resolve));
  await t?.close();
});

async function spansUntil(check: (all: OtlpSpan[]) => boolean, timeoutMs = 20_000): Promise<OtlpSpan[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (check(spans)) return spans;
    if (Date.now() > deadline)
      throw new Error(
        `spans never matched: ${JSON.stringify(spans.map((s) => [s.name, s.traceId, s.spanId, s.parentSpanId]))}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test("a run is one trace under the caller's traceparent: run span, step spans, the embedded run under its step, GenAI attributes; http steps and webhooks send traceparent; worker-thread metrics reach /metrics", async () => {
  const inner = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const outer = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [
      // A secret in the query string: traces record url.full without it.
      { id: 'call', kind: 'http', method: 'GET', url: `${upstream.url}/ping?api_key=s3cret` },
      { id: 'inner', kind: 'circuit', circuit_uid: inner.circuit.uid, input: { name: 'Ada' } },
      { id: 'ask', kind: 'llm', model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] },
    ],
  });
  const rest = restClient(`${service!.url}/api/v1`);
  const traceId = crypto.randomBytes(16).toString('hex');
  const callerSpanId = crypto.randomBytes(8).toString('hex');
  const submitted = await rest('POST', `/circuit-adaptors/${outer.adaptorUid}/query`, {
    token: owner.token,
    body: { input: {}, webhook: `${receiver.url}/hook`, webhook_events_filter: ['completed'] },
    headers: { traceparent: `00-${traceId}-${callerSpanId}-01` },
  });
  expect(submitted.status).toBeLessThan(300);
  const run = await waitForRun({ rest }, submitted.body.payload.uid, owner.token, 30_000);
  expect(run.state).toBe('COMPLETED');

  // The fake upstream and the webhook receiver got the caller's trace id.
  expect(upstream.requests).toHaveLength(1);
  expect(String(upstream.requests[0].headers.traceparent).split('-')[1]).toBe(traceId);

  const all = await spansUntil((list) => {
    const runSpan = list.find(
      (s) =>
        s.name === 'circuit.run' &&
        attr(s, 'circuit.run.uid') === run.uid &&
        attr(s, 'circuit.run.embedded') === undefined,
    );
    return (
      Boolean(runSpan) &&
      list.filter((s) => s.parentSpanId === runSpan!.spanId).length === 3 &&
      list.filter(
        (s) => s.traceId === traceId && s.name === 'circuit.step' && attr(s, 'circuit.step.kind') !== undefined,
      ).length >= 5 &&
      list.filter((s) => s.traceId === traceId && s.kind === 3).length >= 2
    );
  });
  const ofRun = all.filter((s) => s.traceId === traceId);
  const runSpan = ofRun.find((s) => s.name === 'circuit.run' && attr(s, 'circuit.run.embedded') === undefined)!;
  expect(runSpan).toBeDefined();
  expect(attr(runSpan, 'circuit.uid')).toBe(outer.circuit.uid);
  expect(attr(runSpan, 'circuit.version.uid')).toBe(outer.version.uid);
  expect(attr(runSpan, 'circuit.run.state')).toBe('COMPLETED');
  expect(Number(attr(runSpan, 'circuit.run.credits'))).toBeGreaterThan(0);
  // The run is a child of the API's query span, which is a child of the caller's span.
  const query = ofRun.find((s) => s.spanId === runSpan.parentSpanId)!;
  expect(query.name).toBe('circuit.query');
  expect(query.parentSpanId).toBe(callerSpanId);

  const steps = ofRun.filter((s) => s.parentSpanId === runSpan.spanId);
  expect(steps.map((s) => attr(s, 'circuit.step.kind')).sort()).toEqual(['circuit', 'http', 'llm']);
  for (const step of steps) {
    expect(step.name).toBe('circuit.step');
    expect(attr(step, 'circuit.step.attempt')).toBe(1);
    expect(attr(step, 'circuit.step.cached')).toBe(false);
  }
  // The http step's request: a CLIENT span under its step, with the HTTP client attributes, and the span the
  // upstream's traceparent names.
  const httpStep = steps.find((s) => attr(s, 'circuit.step.kind') === 'http')!;
  const [request, ...noOther] = ofRun.filter((s) => s.parentSpanId === httpStep.spanId);
  expect(noOther).toEqual([]);
  expect(request.name).toBe('GET');
  expect(request.kind).toBe(3);
  expect(attr(request, 'http.request.method')).toBe('GET');
  expect(attr(request, 'server.address')).toBe('127.0.0.1');
  expect(attr(request, 'server.port')).toBe(Number(new URL(upstream.url).port));
  expect(attr(request, 'url.full')).toBe(`${upstream.url}/ping`);
  expect(attr(request, 'http.response.status_code')).toBe(200);
  expect(JSON.stringify(ofRun)).not.toContain('s3cret');
  expect(String(upstream.requests[0].headers.traceparent).split('-')[2]).toBe(request.spanId);
  // The llm step's model call: a CLIENT `chat` span with the GenAI attributes.
  const llm = steps.find((s) => attr(s, 'circuit.step.kind') === 'llm')!;
  const [chat, ...noOtherCall] = ofRun.filter((s) => s.parentSpanId === llm.spanId);
  expect(noOtherCall).toEqual([]);
  expect(chat.name).toBe('chat gpt-test');
  expect(chat.kind).toBe(3);
  expect(attr(chat, 'gen_ai.operation.name')).toBe('chat');
  expect(attr(chat, 'gen_ai.provider.name')).toBe('openai');
  expect(attr(chat, 'gen_ai.request.model')).toBe('gpt-test');
  expect(attr(chat, 'gen_ai.response.model')).toBe('gpt-test');
  expect(attr(chat, 'gen_ai.response.finish_reasons')).toEqual(['stop']);
  expect(attr(chat, 'gen_ai.usage.input_tokens')).toBe(120);
  expect(attr(chat, 'gen_ai.usage.output_tokens')).toBe(30);
  expect(attr(chat, 'server.address')).toBe('127.0.0.1');
  expect(attr(chat, 'server.port')).toBe(Number(new URL(openai.baseUrl).port));
  // The embedded run: a circuit.run span under the circuit step, its steps under it.
  const circuitStep = steps.find((s) => attr(s, 'circuit.step.kind') === 'circuit')!;
  const embedded = ofRun.find((s) => s.name === 'circuit.run' && s.parentSpanId === circuitStep.spanId)!;
  expect(embedded).toBeDefined();
  expect(attr(embedded, 'circuit.uid')).toBe(inner.circuit.uid);
  // Its own uid (it has no row: the run's uid and its step's path), and the run it is part of.
  expect(attr(embedded, 'circuit.run.uid')).toBe(`${run.uid}/inner`);
  expect(attr(embedded, 'circuit.run.root.uid')).toBe(run.uid);
  expect(
    ofRun
      .filter((s) => s.parentSpanId === embedded.spanId)
      .map((s) => attr(s, 'circuit.step.kind'))
      .sort(),
  ).toEqual(['template', 'transform']);
  // Every span of the run (embedded ones too) is in the caller's trace: no other trace names this run.
  expect(
    all
      .filter((s) => attr(s, 'circuit.run.uid') === run.uid || attr(s, 'circuit.run.root.uid') === run.uid)
      .every((s) => s.traceId === traceId),
  ).toBe(true);

  // The webhook delivery: a span in the run's trace, and its traceparent on the request.
  const deadline = Date.now() + 15_000;
  while (receiver.requests.length === 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  expect(String(receiver.requests[0]?.headers.traceparent).split('-')[1]).toBe(traceId);

  // The run worker thread's metrics reach the API thread's /metrics (added to the totals within a second).
  const metricsDeadline = Date.now() + 15_000;
  let metrics = '';
  for (;;) {
    metrics = await (await fetch(`${service!.url}/metrics`)).text();
    const counted =
      /^circuit_runs_total\{state="COMPLETED"\} [1-9]/m.test(metrics) &&
      /^circuit_step_duration_seconds_count\{kind="llm"\} 1$/m.test(metrics);
    if (counted || Date.now() > metricsDeadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(metrics).toMatch(/^circuit_runs_total\{state="COMPLETED"\} [1-9]/m);
  expect(metrics).toMatch(/^circuit_step_duration_seconds_count\{kind="llm"\} 1$/m);
});

test('a run queried without traceparent has a trace of its own', async () => {
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const rest = restClient(`${service!.url}/api/v1`);
  const submitted = await rest('POST', `/circuit-adaptors/${hello.adaptorUid}/query`, {
    token: owner.token,
    body: { input: { name: 'Bo' } },
  });
  const run = await waitForRun({ rest }, submitted.body.payload.uid, owner.token, 30_000);
  const all = await spansUntil((list) =>
    list.some((s) => s.name === 'circuit.run' && attr(s, 'circuit.run.uid') === run.uid),
  );
  const runSpan = all.find((s) => s.name === 'circuit.run' && attr(s, 'circuit.run.uid') === run.uid)!;
  const query = all.find((s) => s.spanId === runSpan.parentSpanId)!;
  expect(query.name).toBe('circuit.query');
  expect(query.parentSpanId ?? '').toBe('');
  await spansUntil(
    (list) => list.filter((s) => s.traceId === runSpan.traceId && s.parentSpanId === runSpan.spanId).length === 2,
  );
});

// Whether it slows them is a latency claim, for a bench (a wall-clock ceiling here would flake on a loaded runner).
test('a collector that is down fails no run', async () => {
  // Nothing listens on this port (the collector above answered on its own port; this one is closed).
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  deadCollector = await spawnServiceProcess('api', t.databaseUrl, {
    RUN_WORKER: 'true',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_BSP_SCHEDULE_DELAY: '50',
  });
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const rest = restClient(`${deadCollector.url}/api/v1`);
  const uids: string[] = [];
  for (const name of ['a', 'b', 'c'])
    uids.push(
      (
        await rest('POST', `/circuit-adaptors/${hello.adaptorUid}/query`, {
          token: owner.token,
          body: { input: { name } },
        })
      ).body.payload.uid,
    );
  for (const uid of uids) expect((await waitForRun({ rest }, uid, owner.token, 10_000)).state).toBe('COMPLETED');
});

test('with traces off (this process), a GraphQL query stores a valid traceparent on the run as sent, and ignores a malformed one', async () => {
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const traceparent = `00-${crypto.randomBytes(16).toString('hex')}-${crypto.randomBytes(8).toString('hex')}-01`;
  const query = async (header: string) => {
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}`, traceparent: header },
      body: JSON.stringify({
        query: 'mutation($a: ID!) { queryCircuitAdaptor(adaptorUid: $a, input: {name: "g"}) { uid } }',
        variables: { a: hello.adaptorUid },
      }),
    });
    const body = (await res.json()) as { data: { queryCircuitAdaptor: { uid: string } } };
    const [row] = await CircuitRun.sequelize!.query<{ traceparent: string | null }>(
      'SELECT traceparent FROM circuit_runs WHERE uid = $1',
      { bind: [body.data.queryCircuitAdaptor.uid], type: QueryTypes.SELECT },
    );
    return row.traceparent;
  };
  expect(await query(traceparent)).toBe(traceparent);
  expect(await query('not-a-traceparent')).toBeNull();
});
