import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import { startScriptedModel } from './support/fake-agent-model';
import { restClient } from './support/http';
import { makeRunnableCircuit, ServiceProcess, spawnServiceProcess, waitForRun } from './support/run-factories';

/**
 * An agent step's trace: one span per model turn with the model call beneath it (a CLIENT `chat` span with the
 * GenAI attributes and token usage), one `execute_tool` span per tool call (GenAI tool attributes), a circuit tool's embedded run beneath its call. Through a spawned `npm start` process
 * exporting OTLP/HTTP JSON to an in-test receiver (the OpenTelemetry SDK is process-global).
 */
jest.setTimeout(120_000);

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 1 INTERNAL, 3 CLIENT. */
  kind?: number;
  attributes?: { key: string; value: OtlpValue }[];
}
interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
const valueOf = (value: OtlpValue): unknown =>
  value.arrayValue
    ? (value.arrayValue.values ?? []).map(valueOf)
    : value.intValue !== undefined
      ? Number(value.intValue)
      : (value.stringValue ?? value.boolValue);
const attr = (span: OtlpSpan, key: string) => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value ? valueOf(value) : undefined;
};

let t: TestApp;
let service: ServiceProcess | undefined;
let collector: http.Server;
const spans: OtlpSpan[] = [];
let model: Awaited<ReturnType<typeof startScriptedModel>>;

beforeAll(async () => {
  t = await startTestApp({ runWorker: false });
  collector = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
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
  model = await startScriptedModel((request) =>
    request.messages.some((m) => m.role === 'tool')
      ? { content: 'done', usage: { prompt_tokens: 220, completion_tokens: 5 } }
      : {
          tool_calls: [{ id: 'call_1', name: 'shout', arguments: '{"text": "hi"}' }],
          usage: { prompt_tokens: 200, completion_tokens: 20 },
        },
  );
  service = await spawnServiceProcess('api', t.databaseUrl, {
    RUN_WORKER: 'true',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test-key',
  });
});
afterAll(async () => {
  await service?.kill();
  await model?.close();
  await new Promise((resolve) => collector?.close(resolve));
  await t?.close();
});

test('each model turn (its model call a CLIENT chat span) and each tool call (execute_tool) is a span under the agent step, with GenAI attributes', async () => {
  const owner = await makeUser({ credits: 100 });
  const shout = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object', properties: { text: { type: 'string' } } },
    steps: [{ id: 'up', kind: 'transform', expression: '$uppercase(input.text)' }],
  });
  const circuit = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [
      {
        id: 'helper',
        kind: 'agent',
        model: 'gpt-agent',
        prompt: 'Shout hi',
        tools: [{ name: 'shout', circuit_uid: shout.circuit.uid }],
      },
    ],
  });
  const rest = restClient(`${service!.url}/api/v1`);
  const submitted = await rest('POST', `/circuit-adaptors/${circuit.adaptorUid}/query`, {
    token: owner.token,
    body: { input: {} },
  });
  const run = await waitForRun({ rest }, submitted.body.payload.uid, owner.token, 30_000);
  expect(run.state).toBe('COMPLETED');

  const deadline = Date.now() + 20_000;
  const find = () => {
    const step = spans.find((s) => s.name === 'circuit.step' && attr(s, 'circuit.step.kind') === 'agent');
    const under = step ? spans.filter((s) => s.parentSpanId === step.spanId) : [];
    return { step, under };
  };
  while (find().under.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  const { step, under } = find();
  expect(step).toBeDefined();
  expect(attr(step!, 'gen_ai.operation.name')).toBe('invoke_agent');
  expect(attr(step!, 'gen_ai.usage.input_tokens')).toBe(420);
  expect(attr(step!, 'gen_ai.provider.name')).toBe('openai');
  expect(attr(step!, 'gen_ai.request.model')).toBe('gpt-agent');
  const turns = under
    .filter((s) => s.name === 'circuit.agent.turn')
    .sort((a, b) => String(attr(a, 'circuit.step.id')).localeCompare(String(attr(b, 'circuit.step.id'))));
  expect(turns.map((s) => attr(s, 'circuit.step.id'))).toEqual(['helper/turn-1', 'helper/turn-2']);
  // Each turn's model call: a CLIENT span under it, with the GenAI attributes, attribute by attribute.
  const modelPort = Number(new URL(model.baseUrl).port);
  const chats = turns.map((turn) => spans.filter((s) => s.parentSpanId === turn.spanId));
  for (const [index, [chat]] of chats.entries()) {
    expect(chats[index]).toHaveLength(1);
    expect(chat.name).toBe('chat gpt-agent');
    expect(chat.kind).toBe(3);
    expect(attr(chat, 'gen_ai.operation.name')).toBe('chat');
    expect(attr(chat, 'gen_ai.provider.name')).toBe('openai');
    expect(attr(chat, 'gen_ai.request.model')).toBe('gpt-agent');
    expect(attr(chat, 'gen_ai.response.model')).toBe('gpt-agent');
    expect(attr(chat, 'server.address')).toBe('127.0.0.1');
    expect(attr(chat, 'server.port')).toBe(modelPort);
  }
  expect(chats.map(([chat]) => attr(chat, 'gen_ai.response.finish_reasons'))).toEqual([['tool_calls'], ['stop']]);
  expect(
    chats.map(([chat]) => [attr(chat, 'gen_ai.usage.input_tokens'), attr(chat, 'gen_ai.usage.output_tokens')]),
  ).toEqual([
    [200, 20],
    [220, 5],
  ]);
  const call = under.find((s) => s.name === 'execute_tool shout')!;
  expect(call).toBeDefined();
  expect(call.kind).toBe(1);
  expect(attr(call, 'gen_ai.operation.name')).toBe('execute_tool');
  expect(attr(call, 'gen_ai.tool.name')).toBe('shout');
  expect(attr(call, 'gen_ai.tool.call.id')).toBe('call_1');
  expect(attr(call, 'gen_ai.tool.type')).toBe('function');
  expect(attr(call, 'circuit.step.id')).toBe('helper/turn-1.call-call_1');
  // The circuit tool's embedded run is beneath its call.
  const embedded = spans.find((s) => s.name === 'circuit.run' && s.parentSpanId === call.spanId);
  expect(embedded).toBeDefined();
  expect(attr(embedded!, 'circuit.uid')).toBe(shout.circuit.uid);
  expect(attr(embedded!, 'circuit.run.root.uid')).toBe(run.uid);
  expect(attr(embedded!, 'circuit.run.uid')).toBe(`${run.uid}/helper/turn-1.call-call_1`);
});
