import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import * as z from 'zod';
import { startTestApp, TestApp } from './support/app';
import { makeCircuit, makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit } from './support/run-factories';
import { Circuit } from '../src/models';
import { CircuitRun } from '../src/models/CircuitRun';
import { baseToolName } from '../src/mcp/tool-names';
import type { CircuitDefinition } from '../src/domain/definition';

let t: TestApp;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await t.close();
});

const TASKS = 'io.modelcontextprotocol/tasks';
const toolName = (owner: TestUser, circuit: Circuit) => baseToolName(owner.username, circuit.name);

/** A client of the current SDK that speaks 2026-07-28 only (no fallback to initialize). */
async function connect(token: string, capabilities: Record<string, unknown> = {}): Promise<Client> {
  const client = new Client(
    { name: 'circuit-service-test', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

const envelope = (capabilities: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
});

/** Follows a task with tasks/get (as a client does) until it has this status. */
async function taskUntil(client: Client, taskId: string, status: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await client.request(
      { method: 'tasks/get', params: { taskId } },
      z.looseObject({ status: z.string() }),
    );
    if (task.status === status) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} still ${task.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const SIGNAL_WAIT: CircuitDefinition = {
  query_schema: { type: 'object' },
  steps: [
    {
      id: 'reply',
      kind: 'wait',
      for: 'signal',
      schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
    },
  ],
  output: 'steps.reply.output',
};

const APPROVAL: CircuitDefinition = {
  query_schema: { type: 'object' },
  steps: [{ id: 'ask', kind: 'approval', prompt: 'Publish the report?' }],
  output: 'steps.ask.output',
};

test('server/discover lists 2026-07-28 and the 2025 revisions; tools/list and tools/call over the stateless revision', async () => {
  const alice = await makeUser();
  const { circuit } = await makeCircuit(alice, { name: 'hello', description: 'Greets' });
  const discover = await post(
    { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } },
    { Authorization: `Bearer ${alice.token}`, 'MCP-Protocol-Version': '2026-07-28' },
  );
  expect(discover.status).toBe(200);
  const text = await discover.text();
  const json = JSON.parse(text.startsWith('{') ? text : text.split('\ndata: ').pop()!) as {
    result: { supportedVersions: string[]; capabilities: Record<string, unknown> };
  };
  expect(json.result.supportedVersions).toEqual(expect.arrayContaining(['2026-07-28', '2025-11-25', '2025-06-18']));
  expect(json.result.capabilities).toMatchObject({ tools: {}, extensions: { [TASKS]: {} } });

  const client = await connect(alice.token);
  expect(client.getProtocolEra()).toBe('modern');
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name)).toEqual([toolName(alice, circuit)]);
  const result = await client.callTool({ name: toolName(alice, circuit), arguments: { name: 'Ada' } });
  expect(result.isError).toBeFalsy();
  const runUid = (result._meta as { run_uid: string }).run_uid;
  expect((await CircuitRun.findByPk(runUid))?.state).toBe('COMPLETED');
});

test("a run waiting on a signal asks the client (input_required); the client's answer is the signal", async () => {
  const alice = await makeUser();
  const { circuit } = await makeRunnableCircuit(alice, SIGNAL_WAIT);
  const client = await connect(alice.token, { elicitation: { form: {} } });
  const asked: string[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { answer: 'yes' } };
  });
  const result = await client.callTool({ name: toolName(alice, circuit), arguments: {} });
  expect(asked).toEqual([expect.stringContaining('Step reply waits for a signal')]);
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toEqual({ answer: 'yes' });
});

test('a task answers at once; tasks/get shows the approval as input_required, tasks/update decides it', async () => {
  const alice = await makeUser();
  const { circuit } = await makeRunnableCircuit(alice, APPROVAL);
  const client = await connect(alice.token, { extensions: { [TASKS]: {} } });
  const created = (await client.request(
    { method: 'tools/call', params: { name: toolName(alice, circuit), arguments: {} } },
    z.looseObject({}),
  )) as { resultType: string; taskId: string; status: string; ttlMs: null };
  expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: null });
  const task = await taskUntil(client, created.taskId, 'input_required');
  expect(task).toMatchObject({
    status: 'input_required',
    inputRequests: {
      'approval:ask': {
        method: 'elicitation/create',
        params: { message: expect.stringContaining('Publish the report?') },
      },
    },
  });
  await client.request(
    {
      method: 'tasks/update',
      params: {
        taskId: created.taskId,
        inputResponses: { 'approval:ask': { action: 'accept', content: { approved: true, comment: 'ship it' } } },
      },
    },
    z.looseObject({}),
  );
  expect(await taskUntil(client, created.taskId, 'completed')).toMatchObject({
    status: 'completed',
    result: { structuredContent: { approved: true, comment: 'ship it' } },
  });
});

test('tasks/* without the extension is -32021; another user cannot see a task', async () => {
  const alice = await makeUser();
  const mallory = await makeUser();
  const { circuit } = await makeRunnableCircuit(alice, APPROVAL);
  const client = await connect(alice.token, { extensions: { [TASKS]: {} } });
  const created = (await client.request(
    { method: 'tools/call', params: { name: toolName(alice, circuit), arguments: {} } },
    z.looseObject({}),
  )) as { taskId: string };
  const plain = await connect(alice.token);
  await expect(
    plain.request({ method: 'tasks/get', params: { taskId: created.taskId } }, z.looseObject({})),
  ).rejects.toMatchObject({ code: -32021 });
  const other = await connect(mallory.token, { extensions: { [TASKS]: {} } });
  await expect(
    other.request({ method: 'tasks/get', params: { taskId: created.taskId } }, z.looseObject({})),
  ).rejects.toMatchObject({ code: -32602 });
  await client.request({ method: 'tasks/cancel', params: { taskId: created.taskId } }, z.looseObject({}));
  await expect(CircuitRun.findByPk(created.taskId)).resolves.toBeTruthy();
});

test('an Origin that is not allowed is 403 before anything else; the service’s own origin is allowed', async () => {
  const alice = await makeUser();
  const body = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } };
  const evil = await post(body, { Authorization: `Bearer ${alice.token}`, Origin: 'http://evil.example.com' });
  expect(evil.status).toBe(403);
  expect(await evil.json()).toMatchObject({ error: { code: 'NotAllowed' } });
  expect((await post(body, { Origin: 'http://evil.example.com' })).status).toBe(403);
  const own = await post(body, { Authorization: `Bearer ${alice.token}`, Origin: new URL(t.url).origin });
  expect(own.status).toBe(200);
});
