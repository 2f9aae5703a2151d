import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  RELATED_TASK_META_KEY,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeCircuit, makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget, submitRun, waitForRun } from './support/run-factories';
import { CircuitRun } from '../src/models/CircuitRun';
import { CreditLedger } from '../src/models/CreditLedger';
import { baseToolName } from '../src/mcp/tool-names';
import type { Circuit } from '../src/models';

/**
 * Where the client supports MCP tasks, a long call returns a task backed by the run,
 * with the SDK's own client (protocol 2025-11-25): the task id is the run's uid, and tasks/get,
 * tasks/result and tasks/cancel are the run's state, output and cancel, answered by any API process.
 */
let t: TestApp;
let second: TestApp;
let holding: Awaited<ReturnType<typeof startHoldingTarget>>;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestApp();
  // Another API process on the same database: a task is nothing but its run, so it answers for it too.
  second = await startTestApp({ runWorker: false }, { databaseUrl: t.databaseUrl });
  holding = await startHoldingTarget();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await holding.close();
  await second.close();
  await t.close();
});

async function connect(token: string, url = t.url): Promise<Client> {
  const client = new Client({ name: 'circuit-service-tasks-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

const toolName = (owner: TestUser, circuit: Circuit) => baseToolName(owner.username, circuit.name);
const ledgerRows = (runUid: string) => CreditLedger.count({ where: { run_uid: runUid } });

/** tools/call with `task`: the CreateTaskResult. */
function callAsTask(client: Client, name: string, args: Record<string, unknown>) {
  return client.request({ method: 'tools/call', params: { name, arguments: args } }, CreateTaskResultSchema, {
    task: { ttl: 60_000 },
  });
}

test('the server offers tasks for tools/call, and every tool may be called as a task', async () => {
  const alice = await makeUser();
  const { circuit } = await makeCircuit(alice, { name: 'hello' });
  const client = await connect(alice.token);
  expect(client.getServerCapabilities()?.tasks).toEqual({ cancel: {}, requests: { tools: { call: {} } } });
  const { tools } = await client.listTools();
  expect(tools.find((tool) => tool.name === toolName(alice, circuit))?.execution).toEqual({ taskSupport: 'optional' });
});

test('a task is its run: created at once, then its result is the output a REST query gives, charged once', async () => {
  const alice = await makeUser();
  const { circuit } = await makeCircuit(alice, { name: 'hello' });
  const client = await connect(alice.token);

  const messages = [];
  for await (const message of client.experimental.tasks.callToolStream(
    { name: toolName(alice, circuit), arguments: { name: 'Ada' } },
    CallToolResultSchema,
    { task: {} },
  )) {
    messages.push(message);
  }
  const created = messages[0];
  if (created.type !== 'taskCreated') throw new Error(`first message: ${JSON.stringify(created)}`);
  const run = (await CircuitRun.findOne({ where: { user_uid: alice.user.uid } }))!;
  expect(created.task.taskId).toBe(run.uid);
  expect(created.task.ttl).toBeNull();
  const last = messages.at(-1)!;
  if (last.type !== 'result') throw new Error(`last message: ${JSON.stringify(last)}`);

  const rest = await submitRun(t, alice.token, (await makeRunnableCircuit(alice, HELLO_DEFINITION)).adaptorUid, {
    input: { name: 'Ada' },
  });
  const restRun = await waitForRun(t, rest.body.payload.uid, alice.token);
  expect(last.result.structuredContent).toEqual({ output: restRun.result_blob.output });
  expect(last.result._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: run.uid });
  expect(await client.experimental.tasks.getTask(run.uid)).toMatchObject({ taskId: run.uid, status: 'completed' });
  expect(await ledgerRows(run.uid)).toBe(1);
});

test('a long call: the task works while the run waits, tasks/result waits for its end, any API process answers', async () => {
  const alice = await makeUser();
  const { circuit } = await makeRunnableCircuit(alice, holding.holdDefinition());
  const client = await connect(alice.token);
  // Counted before the call: its run may reach the target before the call answers.
  const heldBefore = holding.held.length;
  const { task } = await callAsTask(client, toolName(alice, circuit), {});
  expect(task.status).toBe('working');
  await holding.untilHeld(heldBefore + 1);

  const elsewhere = await connect(alice.token, second.url);
  expect(await elsewhere.experimental.tasks.getTask(task.taskId)).toMatchObject({
    taskId: task.taskId,
    status: 'working',
    statusMessage: 'running',
  });
  let answered = false;
  const result = elsewhere.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema).then((r) => {
    answered = true;
    return r as CallToolResult;
  });
  // tasks/result has not answered: the run is still held (its state is read after release, below).
  expect((await CircuitRun.findByPk(task.taskId))!.state).toBe('RUNNING');
  expect(answered).toBe(false);

  holding.release('{"done":true}');
  const final = await result;
  expect(final.isError).toBeUndefined();
  expect(final.structuredContent).toEqual({ done: true });
  expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'completed' });
  expect(await ledgerRows(task.taskId)).toBe(1);
});

test('tasks/cancel cancels the run: EXCEPTION Canceled, charged once, its result an error, not cancellable again', async () => {
  const alice = await makeUser();
  const { circuit } = await makeRunnableCircuit(alice, holding.holdDefinition());
  const client = await connect(alice.token);
  const heldBefore = holding.held.length;
  const { task } = await callAsTask(client, toolName(alice, circuit), {});
  await holding.untilHeld(heldBefore + 1);

  const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
  expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
  const ended = await waitForRun(t, task.taskId, alice.token);
  expect(ended.state).toBe('EXCEPTION');
  expect(ended.error.code).toBe('Canceled');
  expect(await ledgerRows(task.taskId)).toBe(1);

  const result = (await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as CallToolResult;
  expect(result.isError).toBe(true);
  expect(result.content).toEqual([{ type: 'text', text: expect.stringMatching(/^Canceled: /) }]);
  await expect(client.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(/terminal status: cancelled/);
});

test('an EXCEPTION run is a failed task whose result is the tool error', async () => {
  const alice = await makeUser();
  const { circuit } = await makeRunnableCircuit(alice, {
    query_schema: { type: 'object' },
    steps: [{ id: 'check', kind: 'transform', expression: '$error("nope")' }],
  });
  const client = await connect(alice.token);
  const { task } = await callAsTask(client, toolName(alice, circuit), {});
  const result = (await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as CallToolResult;
  expect(result.isError).toBe(true);
  expect(result.content).toEqual([{ type: 'text', text: expect.stringMatching(/^StepFailed: .*nope/) }]);
  expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({
    status: 'failed',
    statusMessage: expect.stringMatching(/^StepFailed: /),
  });
});

test("a task is its caller's only: another user's run, a made-up id and a huge one are all 'not found'", async () => {
  const alice = await makeUser();
  const mallory = await makeUser();
  const { circuit } = await makeRunnableCircuit(alice, holding.holdDefinition(), { isPrivate: false });
  const heldBefore = holding.held.length;
  const { task } = await callAsTask(await connect(alice.token), toolName(alice, circuit), {});
  await holding.untilHeld(heldBefore + 1);

  const intruder = await connect(mallory.token);
  for (const taskId of [task.taskId, '00000000-0000-4000-8000-000000000000', 'not-a-uid', 'x'.repeat(100_000)]) {
    await expect(intruder.experimental.tasks.getTask(taskId)).rejects.toThrow(/Task not found/);
    await expect(intruder.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).rejects.toThrow(
      /Task not found/,
    );
    await expect(intruder.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/Task not found/);
  }
  expect((await CircuitRun.findByPk(task.taskId))!.state).toBe('RUNNING');
  holding.release();
  expect((await waitForRun(t, task.taskId, alice.token)).state).toBe('COMPLETED');
});

test('a refused call creates no task and no run: the refusal is the error', async () => {
  const alice = await makeUser();
  const { circuit } = await makeCircuit(alice, { name: 'hello' });
  const client = await connect(alice.token);
  await expect(callAsTask(client, toolName(alice, circuit), { name: 42 })).rejects.toThrow(/BadClientData/);
  expect(await CircuitRun.count({ where: { user_uid: alice.user.uid } })).toBe(0);
});
