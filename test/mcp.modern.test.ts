import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
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

/** One raw 2026-07-28 request (the SDK's client takes no `resultType: "task"` from tools/call). */
async function rpc(token: string, method: string, params: Record<string, unknown>, capabilities = {}) {
  const res = await post(
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope(capabilities) } },
    {
      Authorization: `Bearer ${token}`,
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      ...(typeof params.taskId === 'string' ? { 'Mcp-Name': params.taskId } : {}),
      ...(typeof params.name === 'string' ? { 'Mcp-Name': params.name } : {}),
    },
  );
  const text = await res.text();
  const data = text.startsWith('{')
    ? text
    : text
        .split('\n')
        .filter((line) => line.startsWith('data: ') && line.trim() !== 'data:')
        .pop()!
        .slice(6);
  return { status: res.status, ...(JSON.parse(data) as { result?: any; error?: { code: number; message: string } }) };
}

const envelope = (capabilities: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
});

/** Follows a task with tasks/get (as a client does) until it has this status. */
async function taskUntil(token: string, taskId: string, status: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { result: task } = await rpc(token, 'tasks/get', { taskId }, { extensions: { [TASKS]: {} } });
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
  const json = await rpc(alice.token, 'server/discover', {});
  expect(json.status).toBe(200);
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
  const tasks = { extensions: { [TASKS]: {} } };
  const created = (await rpc(alice.token, 'tools/call', { name: toolName(alice, circuit), arguments: {} }, tasks))
    .result as { resultType: string; taskId: string; status: string; ttlMs: null };
  expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: null });
  const task = await taskUntil(alice.token, created.taskId, 'input_required');
  expect(task).toMatchObject({
    status: 'input_required',
    inputRequests: {
      'approval:ask': {
        method: 'elicitation/create',
        params: { message: expect.stringContaining('Publish the report?') },
      },
    },
  });
  const update = await rpc(
    alice.token,
    'tasks/update',
    {
      taskId: created.taskId,
      inputResponses: { 'approval:ask': { action: 'accept', content: { approved: true, comment: 'ship it' } } },
    },
    tasks,
  );
  expect(update.result).toMatchObject({ resultType: 'complete' });
  expect(await taskUntil(alice.token, created.taskId, 'completed')).toMatchObject({
    status: 'completed',
    result: { structuredContent: { approved: true, comment: 'ship it' } },
  });
});

test('tasks/* without the extension is -32021; another user cannot see a task; tasks/cancel cancels the run', async () => {
  const alice = await makeUser();
  const mallory = await makeUser();
  const { circuit } = await makeRunnableCircuit(alice, APPROVAL);
  const tasks = { extensions: { [TASKS]: {} } };
  const { taskId } = (await rpc(alice.token, 'tools/call', { name: toolName(alice, circuit), arguments: {} }, tasks))
    .result as { taskId: string };
  expect((await rpc(alice.token, 'tasks/get', { taskId })).error).toMatchObject({ code: -32021 });
  expect((await rpc(mallory.token, 'tasks/get', { taskId }, tasks)).error).toMatchObject({ code: -32602 });
  expect((await rpc(mallory.token, 'tasks/cancel', { taskId }, tasks)).error).toMatchObject({ code: -32602 });
  expect((await rpc(alice.token, 'tasks/cancel', { taskId }, tasks)).result).toMatchObject({ resultType: 'complete' });
  const task = await taskUntil(alice.token, taskId, 'cancelled');
  expect(task).toMatchObject({ status: 'cancelled' });
  expect((await CircuitRun.findByPk(taskId))?.cancel_requested_at).toBeTruthy();
});

test('an Origin that is not allowed is 403 before anything else; the service’s own origin is allowed', async () => {
  const alice = await makeUser();
  const body = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } };
  const discover = { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'server/discover' };
  const evil = await post(body, { Authorization: `Bearer ${alice.token}`, Origin: 'http://evil.example.com' });
  expect(evil.status).toBe(403);
  expect(await evil.json()).toMatchObject({ error: { code: 'NotAllowed' } });
  expect((await post(body, { Origin: 'http://evil.example.com' })).status).toBe(403);
  const own = await post(body, { ...discover, Authorization: `Bearer ${alice.token}`, Origin: new URL(t.url).origin });
  expect(own.status).toBe(200);
});
