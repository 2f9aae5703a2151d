import { startTestApp, TestApp } from './support/app';
import { makeCircuit, makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget } from './support/run-factories';
import {
  a2aClient,
  bearerFetch,
  sendParams,
  TaskState,
  userMessage,
  type StreamResponse,
  type Task,
} from './support/a2a';
import { CircuitRun } from '../src/models/CircuitRun';
import { createApiToken } from '../src/commands/create-api-token';
import { revokeApiToken } from '../src/commands/revoke-api-token';
import { baseToolName } from '../src/mcp/tool-names';
import type { CircuitDefinition } from '../src/domain/definition';
import type { Circuit } from '../src/models';

/**
 * A2A over the SDK's own client: the agent card lists the caller's circuits as skills, a message
 * starts a run, a task is that run (get, stream, cancel), and a run waiting on a signal or an
 * approval asks its client for input.
 */

jest.setTimeout(60_000);

let t: TestApp;
let limited: TestApp;
let holding: Awaited<ReturnType<typeof startHoldingTarget>>;

beforeAll(async () => {
  t = await startTestApp({ runRateLimitPerMinute: 0 });
  // The run rate limit, counted across API processes of one database (a second process, its own limit setting).
  limited = await startTestApp({ runRateLimitPerMinute: 2 }, { databaseUrl: t.databaseUrl });
  holding = await startHoldingTarget();
});
afterAll(async () => {
  await holding.close();
  await limited.close();
  await t.close();
});

const skillOf = (owner: TestUser, circuit: Circuit) => baseToolName(owner.username, circuit.name);

function asTask(result: unknown): Task {
  if (typeof result !== 'object' || result === null || !('status' in result)) {
    throw new Error(`not a task: ${JSON.stringify(result)}`);
  }
  return result as Task;
}

/** The data of a part (`data` or `text`). */
function partValue(part: { content?: { $case: string; value: unknown } }): unknown {
  return part.content?.value;
}

async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const signalWait: CircuitDefinition = {
  query_schema: { type: 'object' },
  steps: [
    {
      id: 'reply',
      kind: 'wait',
      for: 'signal',
      schema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
    },
    { id: 'after', kind: 'transform', expression: '{"got": steps.reply.output}' },
  ],
  output: 'steps.after.output',
};

describe('the agent card', () => {
  test('without a token: no skills, and a bearer security scheme', async () => {
    const res = await fetch(`${t.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } });
    expect(res.status).toBe(200);
    const card = await res.json();
    expect(card.skills ?? []).toEqual([]);
    expect(card.securitySchemes).toEqual({
      bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: 'Bearer' }) },
    });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: expect.anything() } }]);
    expect(card.supportedInterfaces).toEqual([
      expect.objectContaining({ url: `${t.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }),
      expect.objectContaining({ url: `${t.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' }),
    ]);
    expect(card.capabilities).toEqual(expect.objectContaining({ streaming: true }));
  });

  test("with a token: the caller's runnable circuits as skills, their ids the MCP tool names, text without control characters", async () => {
    const alice = await makeUser();
    const { circuit } = await makeCircuit(alice, {
      name: 'hello',
      description: 'Says\u0007 hello\u001b[31m\nto\tyou\u2028',
    });
    const client = await a2aClient(t.url, alice.token);
    const card = await client.getAgentCard();
    expect(card.skills.map((s) => s.id)).toEqual([skillOf(alice, circuit)]);
    const [skill] = card.skills;
    expect(skill.name).toBe(`${alice.username}/hello`);
    expect(skill.description.startsWith('Says hello[31m\nto\tyou')).toBe(true);
    // eslint-disable-next-line no-control-regex
    expect(skill.description).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/);

    const bad = await fetch(`${t.url}/.well-known/agent-card.json`, { headers: { Authorization: 'Bearer nope' } });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });
});

describe('the previous protocol (0.3): its card and its method names', () => {
  test('a client sending no A2A-Version gets the 0.3 card and is answered on message/send and tasks/get', async () => {
    const alice = await makeUser();
    const { circuit } = await makeCircuit(alice, { name: 'hello' });
    const card = await (
      await fetch(`${t.url}/.well-known/agent-card.json`, { headers: { Authorization: `Bearer ${alice.token}` } })
    ).json();
    expect(card).toMatchObject({ url: `${t.url}/a2a`, protocolVersion: '0.3', preferredTransport: 'JSONRPC' });
    expect(card.skills.map((s: { id: string }) => s.id)).toEqual([skillOf(alice, circuit)]);

    const rpc = async (method: string, params: unknown) =>
      (
        await bearerFetch(alice.token)(`${t.url}/a2a`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        })
      ).json();
    const sent = await rpc('message/send', {
      message: {
        kind: 'message',
        messageId: 'legacy-1',
        role: 'user',
        parts: [{ kind: 'data', data: { name: 'Ada' } }],
        metadata: { skill_id: skillOf(alice, circuit) },
      },
    });
    expect(sent.result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    expect(sent.result.artifacts[0].parts).toEqual([expect.objectContaining({ kind: 'text', text: 'HELLO ADA' })]);
    const got = await rpc('tasks/get', { id: sent.result.id });
    expect(got.result).toMatchObject({ id: sent.result.id, status: { state: 'completed' } });
  });
});

describe('messages and tasks', () => {
  test('a message starts a run of the named skill; the blocking answer is the completed task with the output', async () => {
    const alice = await makeUser();
    const { circuit } = await makeCircuit(alice, { name: 'hello' });
    await makeCircuit(alice, { name: 'other' });
    const client = await a2aClient(t.url, alice.token);
    const task = asTask(
      await client.sendMessage(
        sendParams(userMessage({ data: { name: 'Ada' } }, { metadata: { skill_id: skillOf(alice, circuit) } })),
      ),
    );
    const run = (await CircuitRun.findByPk(task.id))!;
    expect(run.user_uid).toBe(alice.user.uid);
    expect(run.circuit_uid).toBe(circuit.uid);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts.map((a) => a.parts.map(partValue))).toEqual([['HELLO ADA']]);
    expect(await client.getTask({ tenant: '', id: task.id })).toMatchObject({
      id: task.id,
      status: { state: TaskState.TASK_STATE_COMPLETED },
    });
  });

  test("the caller's only circuit needs no skill id, and takes a text part when its input is one string", async () => {
    const alice = await makeUser();
    await makeCircuit(alice, { name: 'hello' });
    const client = await a2aClient(t.url, alice.token);
    const task = asTask(await client.sendMessage(sendParams(userMessage({ text: 'Grace' }))));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts[0].parts.map(partValue)).toEqual(['HELLO GRACE']);
  });

  test('a message sent again (the same messageId) answers the same run', async () => {
    const alice = await makeUser();
    await makeCircuit(alice, { name: 'hello' });
    const client = await a2aClient(t.url, alice.token);
    const message = userMessage({ text: 'Ada' }, { messageId: 'retried-once' });
    const first = asTask(await client.sendMessage(sendParams(message)));
    const again = asTask(await client.sendMessage(sendParams(message)));
    expect(again.id).toBe(first.id);
    expect(await CircuitRun.count({ where: { user_uid: alice.user.uid } })).toBe(1);
  });

  test('an unknown skill, or no skill among several, is a clear error and starts no run', async () => {
    const alice = await makeUser();
    await makeCircuit(alice, { name: 'one' });
    await makeCircuit(alice, { name: 'two' });
    const client = await a2aClient(t.url, alice.token);
    await expect(
      client.sendMessage(
        sendParams(userMessage({ data: { name: 'x' } }, { metadata: { skill_id: 'nobody__nothing' } })),
      ),
    ).rejects.toThrow(/Unknown skill "nobody__nothing"/);
    await expect(client.sendMessage(sendParams(userMessage({ data: { name: 'x' } })))).rejects.toThrow(
      /metadata\.skill_id: you may run 2 circuits/,
    );
    expect(await CircuitRun.count({ where: { user_uid: alice.user.uid } })).toBe(0);
  });

  test('streaming: the task, then its state changes, the output as an artifact, then completed', async () => {
    const alice = await makeUser();
    const { circuit } = await makeCircuit(alice, { name: 'hello' });
    const client = await a2aClient(t.url, alice.token);
    const events = await collect(
      client.sendMessageStream(
        sendParams(userMessage({ data: { name: 'Ada' } }, { metadata: { skill_id: skillOf(alice, circuit) } })),
      ),
    );
    const first = events[0].payload;
    if (first?.$case !== 'task') throw new Error(`first event: ${JSON.stringify(events[0])}`);
    expect(first.value.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    const states = events.flatMap((e) => (e.payload?.$case === 'statusUpdate' ? [e.payload.value.status?.state] : []));
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(states.filter((s) => s === TaskState.TASK_STATE_COMPLETED)).toHaveLength(1);
    const artifact = events.find((e) => e.payload?.$case === 'artifactUpdate')?.payload;
    if (artifact?.$case !== 'artifactUpdate') throw new Error('no artifact');
    expect(artifact.value.artifact?.parts.map(partValue)).toEqual(['HELLO ADA']);
    expect(events.at(-1)?.payload?.$case).toBe('statusUpdate');
  });

  test('a run waiting on a signal is input-required; the next message on the task is the signal, and it completes', async () => {
    const alice = await makeUser();
    await makeRunnableCircuit(alice, signalWait);
    const client = await a2aClient(t.url, alice.token);
    const waiting = asTask(await client.sendMessage(sendParams(userMessage({ data: {} }))));
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const asked = waiting.status?.message?.parts.map(partValue);
    expect(asked?.[1]).toEqual(
      expect.objectContaining({
        step_id: 'reply',
        kind: 'signal',
        schema: expect.objectContaining({ required: ['n'] }),
      }),
    );

    // Data failing the step's schema is refused; the run keeps waiting.
    await expect(
      client.sendMessage(sendParams(userMessage({ data: { n: 'x' } }, { taskId: waiting.id }))),
    ).rejects.toThrow(/BadClientData/);
    expect((await client.getTask({ tenant: '', id: waiting.id })).status?.state).toBe(
      TaskState.TASK_STATE_INPUT_REQUIRED,
    );

    const done = asTask(await client.sendMessage(sendParams(userMessage({ data: { n: 3 } }, { taskId: waiting.id }))));
    expect(done.id).toBe(waiting.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts[0].parts.map(partValue)).toEqual([{ got: { n: 3 } }]);
    await expect(
      client.sendMessage(sendParams(userMessage({ data: { n: 4 } }, { taskId: waiting.id }))),
    ).rejects.toThrow(/has ended/);
  });

  test('an approval is input-required; the decision as a data part resumes the run', async () => {
    const alice = await makeUser();
    await makeRunnableCircuit(alice, {
      query_schema: { type: 'object' },
      steps: [{ id: 'ok', kind: 'approval', prompt: 'Ship it?' }],
      output: 'steps.ok.output.approved',
    });
    const client = await a2aClient(t.url, alice.token);
    const events = await collect(client.sendMessageStream(sendParams(userMessage({ data: {} }))));
    const last = events.at(-1)?.payload;
    if (last?.$case !== 'statusUpdate') throw new Error(`last event: ${JSON.stringify(events.at(-1))}`);
    expect(last.value.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(last.value.status?.message?.parts.map(partValue)[1]).toEqual(
      expect.objectContaining({ step_id: 'ok', kind: 'approval', prompt: 'Ship it?' }),
    );
    const taskId = last.value.taskId;
    const resumed = await collect(
      client.sendMessageStream(sendParams(userMessage({ data: { approved: true, comment: 'yes' } }, { taskId }))),
    );
    // The decision can complete the run before the stream reads it: then the stream is that one
    // completed task; otherwise its last event is the status update that says so.
    const end = resumed.at(-1)?.payload;
    const endState = end?.$case === 'statusUpdate' || end?.$case === 'task' ? end.value.status?.state : undefined;
    expect(endState).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await client.getTask({ tenant: '', id: taskId })).artifacts[0].parts.map(partValue)).toEqual([true]);
  });

  test('cancel cancels the run; an ended task cannot be canceled', async () => {
    const alice = await makeUser();
    await makeRunnableCircuit(alice, holding.holdDefinition());
    const client = await a2aClient(t.url, alice.token);
    const heldBefore = holding.held.length;
    const task = asTask(await client.sendMessage(sendParams(userMessage({ data: {} }), true)));
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(task.status?.state);
    await holding.untilHeld(heldBefore + 1);
    const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await CircuitRun.findByPk(task.id))!.error).toEqual(expect.objectContaining({ code: 'Canceled' }));
    await expect(client.cancelTask({ tenant: '', id: task.id, metadata: undefined })).rejects.toThrow(
      /cannot be canceled/,
    );
  });

  test("another user's run is not found", async () => {
    const alice = await makeUser();
    const bob = await makeUser();
    await makeCircuit(alice, { name: 'hello' });
    const task = asTask(
      await (await a2aClient(t.url, alice.token)).sendMessage(sendParams(userMessage({ text: 'x' }))),
    );
    const client = await a2aClient(t.url, bob.token);
    await expect(client.getTask({ tenant: '', id: task.id })).rejects.toThrow(/Task not found/);
    await expect(client.getTask({ tenant: '', id: 'not-a-uid' })).rejects.toThrow(/Task not found/);
  });
});

describe('tokens and limits', () => {
  test('no token is 401 before the body is read; a token without runs:write is refused and starts no run', async () => {
    const res = await fetch(`${t.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');

    const alice = await makeUser();
    await makeCircuit(alice, { name: 'hello' });
    const { token } = await createApiToken(alice.user, 'read only', { scopes: ['runs:read', 'circuits:read'] });
    const client = await a2aClient(t.url, token);
    await expect(client.sendMessage(sendParams(userMessage({ text: 'x' })))).rejects.toThrow(
      /NotAllowed: This token lacks the scope runs:write/,
    );
    expect(await CircuitRun.count({ where: { user_uid: alice.user.uid } })).toBe(0);
  });

  test("the body is the service's: 413 past 1 MiB, 400 for a NUL character, in the REST envelope", async () => {
    const alice = await makeUser();
    const post = (body: string) =>
      bearerFetch(alice.token)(`${t.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body,
      });
    const big = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x'.repeat(1024 * 1024) } }),
    );
    expect(big.status).toBe(413);
    const nul = await post('{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"a\\u0000b"}}');
    expect(nul.status).toBe(400);
    expect(await nul.json()).toEqual({ error: { code: 'BadClientData', message: expect.stringContaining('NUL') } });
  });

  test('each message that starts a run counts against the run rate limit and answers its headers', async () => {
    const alice = await makeUser();
    await makeCircuit(alice, { name: 'hello' });
    const send = (text: string) =>
      bearerFetch(alice.token)(`${limited.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: {
            message: { messageId: `rl-${text}`, role: 'ROLE_USER', parts: [{ text }] },
            configuration: { returnImmediately: true },
          },
        }),
      });
    const first = await send('a');
    expect(first.status).toBe(200);
    expect((await first.json()).result.task.id).toEqual(expect.any(String));
    expect(first.headers.get('ratelimit-limit')).toBe('2');
    expect(first.headers.get('ratelimit-remaining')).toBe('1');
    expect((await send('b')).headers.get('ratelimit-remaining')).toBe('0');
    const refused = await send('c');
    const body = await refused.json();
    expect(body.error.message).toMatch(/^RateLimited: /);
    expect(refused.headers.get('retry-after')).toEqual(expect.any(String));
    expect(await CircuitRun.count({ where: { user_uid: alice.user.uid } })).toBe(2);
  });

  test('a stream ends when its token is revoked', async () => {
    const alice = await makeUser();
    await makeRunnableCircuit(alice, holding.holdDefinition());
    const { token, record } = await createApiToken(alice.user, 'streaming');
    const client = await a2aClient(t.url, token);
    const heldBefore = holding.held.length;
    const stream = client.sendMessageStream(sendParams(userMessage({ data: {} })));
    const first = await stream.next();
    expect(first.value?.payload?.$case).toBe('task');
    await holding.untilHeld(heldBefore + 1);
    const rest = collect(stream);
    expect(await revokeApiToken(alice.user, record.uid)).toBe(true);
    await expect(rest).rejects.toThrow(/revoked/);
  });
  test('a stream ends when its token expires', async () => {
    const alice = await makeUser();
    await makeRunnableCircuit(alice, holding.holdDefinition());
    const { token } = await createApiToken(alice.user, 'short', { expiresAt: new Date(Date.now() + 3_000) });
    const client = await a2aClient(t.url, token);
    const heldBefore = holding.held.length;
    const stream = client.sendMessageStream(sendParams(userMessage({ data: {} })));
    expect((await stream.next()).value?.payload?.$case).toBe('task');
    await holding.untilHeld(heldBefore + 1);
    await expect(collect(stream)).rejects.toThrow(/expired/);
  });
});

describe('a task is its run', () => {
  test('another API process follows a task (SubscribeToTask) to its end', async () => {
    const alice = await makeUser();
    await makeRunnableCircuit(alice, holding.holdDefinition());
    const heldBefore = holding.held.length;
    const task = asTask(
      await (await a2aClient(t.url, alice.token)).sendMessage(sendParams(userMessage({ data: {} }), true)),
    );
    await holding.untilHeld(heldBefore + 1);
    const elsewhere = await a2aClient(limited.url, alice.token);
    const stream = elsewhere.resubscribeTask({ tenant: '', id: task.id });
    const first = (await stream.next()).value?.payload;
    if (first?.$case !== 'task') throw new Error(`first event: ${JSON.stringify(first)}`);
    expect(first.value.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const rest = collect(stream);
    holding.release('{"done":true}');
    const events = await rest;
    const end = events.at(-1)?.payload;
    if (end?.$case !== 'statusUpdate') throw new Error(`last event: ${JSON.stringify(events.at(-1))}`);
    expect(end.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(events.some((e) => e.payload?.$case === 'artifactUpdate')).toBe(true);
    await expect(elsewhere.resubscribeTask({ tenant: '', id: task.id }).next()).rejects.toThrow(/has ended/);
  });
});
