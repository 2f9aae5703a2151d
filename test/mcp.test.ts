import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeCircuit, makeUser, TestUser } from './support/factories';
import { star } from './support/circuit-factories';
import {
  makeRunnableCircuit,
  startHoldingTarget,
  startHttpTarget,
  submitRun,
  waitForRun,
} from './support/run-factories';
import { Circuit } from '../src/models';
import { CircuitRun } from '../src/models/CircuitRun';
import { CreditLedger } from '../src/models/CreditLedger';
import { RunEvent } from '../src/models/RunEvent';
import { stepEventText, StepProgress } from '../src/mcp/follow-run';
import { baseToolName, toolNames } from '../src/mcp/tool-names';
import type { StepEvent } from '../src/engine/run-control';
import type { CircuitDefinition } from '../src/domain/definition';

let t: TestApp;
let holding: Awaited<ReturnType<typeof startHoldingTarget>>;
/** A second API process on the same database (the last test), closed first. */
let second: TestApp | undefined;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestApp();
  holding = await startHoldingTarget();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await holding.close();
  await second?.close();
  await t.close();
});

async function connect(token?: string): Promise<Client> {
  const client = new Client({ name: 'circuit-service-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
    requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} },
  });
  await client.connect(transport);
  // The session id given at initialize scopes the idempotency keys of the client's calls.
  expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  clients.push(client);
  return client;
}

const toolName = (owner: TestUser, circuit: Circuit) => baseToolName(owner.username, circuit.name);
const ledgerRows = (runUid: string) => CreditLedger.count({ where: { run_uid: runUid } });
const runUidOf = (result: CallToolResult) => (result._meta as { run_uid: string }).run_uid;

/** Three steps, one after another; the output is an object. */
const THREE_STEPS: CircuitDefinition = {
  query_schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  steps: [
    { id: 'greet', kind: 'template', template: 'Hello {{input.name}}' },
    { id: 'shout', kind: 'transform', expression: '$uppercase(steps.greet.output)' },
    {
      id: 'wrap',
      kind: 'transform',
      expression: '{"greeting": steps.shout.output, "length": $length(steps.shout.output)}',
    },
  ],
  output: 'steps.wrap.output',
};

describe('tool names', () => {
  test('sanitize to [A-Za-z0-9_-], stay within 128 characters and are told apart when they collide', () => {
    expect(baseToolName('alice', 'my.circuit')).toBe('alice__my_circuit');
    expect(baseToolName('alice', 'x'.repeat(200))).toHaveLength(128);
    expect(
      toolNames([
        { username: 'a', circuitName: 'b.c' },
        { username: 'a', circuitName: 'b_c' },
      ]),
    ).toEqual(['a__b_c', 'a__b_c_2']);
  });

  test('progress always increases, and its whole part counts completed steps', () => {
    const progress = new StepProgress();
    const values = (['started', 'started', 'completed', 'retrying', 'completed', 'started'] as const).map((status) =>
      progress.next({ status }),
    );
    expect(values.map(Math.floor)).toEqual([0, 0, 1, 1, 2, 2]);
    for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThan(values[i - 1]);
  });
});

test('without a valid bearer token /mcp is 401 in the REST envelope with WWW-Authenticate: Bearer', async () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
  };
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  for (const authorization of [undefined, 'Bearer cst_not-a-token']) {
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(initialize),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    expect(await res.json()).toEqual({ error: { code: 'Unauthorized', message: expect.any(String) } });
  }
  await expect(connect()).rejects.toMatchObject({ code: 401 });
  // The body limit is the service's: 413 before the body is read.
  const user = await makeUser();
  const big = await fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: { ...headers, authorization: `Bearer ${user.token}` },
    body: JSON.stringify({ ...initialize, pad: 'x'.repeat(1024 * 1024 + 1) }),
  });
  expect(big.status).toBe(413);
});

test("tools/list: the caller's own and starred runnable circuits with a primary version; never another user's private circuit", async () => {
  const alice = await makeUser();
  const bob = await makeUser();
  const { circuit: hello } = await makeCircuit(alice, { name: 'hello', description: 'Greets loudly' });
  const { circuit: mine } = await makeCircuit(alice, { name: 'my.private', isPrivate: true });
  await makeCircuit(alice, { name: 'unpublished' }, null);
  const { circuit: bobPublic } = await makeCircuit(bob, { name: 'shared', description: "Bob's" });
  const { circuit: bobTurnedPrivate } = await makeCircuit(bob, { name: 'was-public' });
  const { circuit: bobProtected } = await makeCircuit(bob, {
    name: 'guarded',
    description: 'Protected',
    isProtected: true,
  });
  await makeCircuit(bob, { name: 'not-starred' });
  for (const circuit of [bobPublic, bobTurnedPrivate, bobProtected]) await star(alice, circuit);
  // Starred while public, private since: alice may no longer run it.
  await Circuit.update({ is_private: true }, { where: { uid: bobTurnedPrivate.uid } });

  const { tools } = await (await connect(alice.token)).listTools();
  expect(tools.map((tool) => tool.name).sort()).toEqual(
    [toolName(alice, hello), toolName(alice, mine), toolName(bob, bobProtected), toolName(bob, bobPublic)].sort(),
  );
  expect(toolName(alice, mine)).toBe(`${alice.username}__my_private`);

  const helloTool = tools.find((tool) => tool.name === toolName(alice, hello))!;
  expect(helloTool.inputSchema).toEqual(HELLO_DEFINITION.query_schema);
  expect(helloTool.description).toMatch(/^Greets loudly\n\nTakes input: name \(string, required\)\./);
  expect(helloTool.description).toContain('1. greet (template)');
  expect(helloTool.outputSchema).toBeUndefined();
  // Protected: runnable, but its steps and schema are its owner's.
  const guarded = tools.find((tool) => tool.name === toolName(bob, bobProtected))!;
  expect(guarded.inputSchema).toEqual({ type: 'object' });
  expect(guarded.description).not.toContain('greet');

  // Bob sees his own three runnable ones, none of alice's (her private one least of all).
  const bobTools = (await (await connect(bob.token)).listTools()).tools.map((tool) => tool.name).sort();
  expect(bobTools).toEqual(
    [
      toolName(bob, bobProtected),
      toolName(bob, bobPublic),
      toolName(bob, bobTurnedPrivate),
      `${bob.username}__not-starred`,
    ].sort(),
  );
});

test('tools/call answers what a REST query of the same circuit and input answers, as one ordinary charged run', async () => {
  const alice = await makeUser();
  const { circuit, adaptorUid } = await makeRunnableCircuit(alice, THREE_STEPS, { name: 'three' });
  const { circuit: hello } = await makeCircuit(alice, { name: 'hello' });
  const client = await connect(alice.token);

  const result = (await client.callTool({
    name: toolName(alice, circuit),
    arguments: { name: 'Ada' },
  })) as CallToolResult;
  const rest = await submitRun(t, alice.token, adaptorUid, { input: { name: 'Ada' } }, { Prefer: 'wait=30' });
  expect(rest.body.payload.state).toBe('COMPLETED');
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toEqual(rest.body.payload.result_blob.output);
  expect(result.structuredContent).toEqual({ greeting: 'HELLO ADA', length: 9 });
  expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(rest.body.payload.result_blob.output) }]);

  // An ordinary run: in "my runs", charged exactly once.
  const uid = runUidOf(result);
  const mine = await t.rest('GET', '/users/circuit-runs', { token: alice.token });
  expect(mine.body.data.map((run: { uid: string }) => run.uid)).toContain(uid);
  expect((await waitForRun(t, uid, alice.token)).state).toBe('COMPLETED');
  expect(await ledgerRows(uid)).toBe(1);

  // A non-object output is wrapped as {output}.
  const wrapped = (await client.callTool({
    name: toolName(alice, hello),
    arguments: { name: 'Ada' },
  })) as CallToolResult;
  expect(wrapped.structuredContent).toEqual({ output: 'HELLO ADA' });
  expect(wrapped.content).toEqual([{ type: 'text', text: '"HELLO ADA"' }]);
  expect(await ledgerRows(runUidOf(wrapped))).toBe(1);
});

test("progress notifications follow the run's step events in log order", async () => {
  const alice = await makeUser();
  const { circuit } = await makeRunnableCircuit(alice, THREE_STEPS);
  const client = await connect(alice.token);
  const progress: Progress[] = [];
  const result = (await client.callTool({ name: toolName(alice, circuit), arguments: { name: 'Bo' } }, undefined, {
    onprogress: (p) => progress.push(p),
  })) as CallToolResult;
  expect(result.isError).toBeFalsy();

  const logged = await RunEvent.findAll({
    where: { run_uid: runUidOf(result), kind: 'step' },
    order: [['seq', 'ASC']],
  });
  const steps = logged.map((event) => event.data as unknown as StepEvent);
  expect(steps.map((s) => `${s.step_id} ${s.status}`)).toEqual([
    'greet started',
    'greet completed',
    'shout started',
    'shout completed',
    'wrap started',
    'wrap completed',
  ]);
  expect(progress.map((p) => p.message)).toEqual(steps.map(stepEventText));
  expect(progress.map((p) => Math.floor(p.progress))).toEqual([0, 1, 1, 2, 2, 3]);
  expect(progress.every((p) => p.total === 3)).toBe(true);
});

test('refusals and failed runs are tool errors: InsufficientCredits, invalid input, an EXCEPTION run with its code', async () => {
  const alice = await makeUser();
  const { circuit: hello } = await makeCircuit(alice, { name: 'hello' });
  const upstream = await startHttpTarget((_req, res) => {
    res.writeHead(503).end();
  });
  try {
    const { circuit: failing } = await makeRunnableCircuit(
      alice,
      {
        query_schema: { type: 'object' },
        steps: [{ id: 'fetch', kind: 'http', method: 'GET', url: `${upstream.url}/down` }],
      },
      { name: 'failing' },
    );
    const client = await connect(alice.token);

    const failed = (await client.callTool({ name: toolName(alice, failing), arguments: {} })) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect(failed.content).toEqual([{ type: 'text', text: expect.stringMatching(/^StepFailed: .*503/) }]);
    const run = await waitForRun(t, runUidOf(failed), alice.token);
    expect(run.error.code).toBe('StepFailed');
    expect(await ledgerRows(run.uid)).toBe(1);

    const invalid = (await client.callTool({
      name: toolName(alice, hello),
      arguments: { name: 42 },
    })) as CallToolResult;
    expect(invalid.isError).toBe(true);
    expect(invalid.content).toEqual([{ type: 'text', text: expect.stringMatching(/^BadClientData: /) }]);

    const broke = await makeUser({ credits: 0 });
    await star(broke, hello);
    const poor = (await (
      await connect(broke.token)
    ).callTool({ name: toolName(alice, hello), arguments: { name: 'x' } })) as CallToolResult;
    expect(poor.isError).toBe(true);
    expect(poor.content).toEqual([{ type: 'text', text: expect.stringMatching(/^InsufficientCredits: /) }]);
    expect(await CircuitRun.count({ where: { user_uid: broke.user.uid } })).toBe(0);

    await expect(client.callTool({ name: `${alice.username}__nope`, arguments: {} })).rejects.toThrow(/Unknown tool/);
  } finally {
    await upstream.close();
  }
});

test('a client that cancels the call cancels the run: EXCEPTION Canceled, charged once', async () => {
  const alice = await makeUser();
  const { circuit } = await makeRunnableCircuit(alice, holding.holdDefinition());
  const client = await connect(alice.token);
  const controller = new AbortController();
  const call = client.callTool({ name: toolName(alice, circuit), arguments: {} }, undefined, {
    signal: controller.signal,
  });
  const settled = call.then(
    () => 'answered',
    (error: Error) => error.message,
  );
  await holding.untilHeld(holding.held.length + 1);
  const run = (await CircuitRun.findOne({ where: { user_uid: alice.user.uid, circuit_uid: circuit.uid } }))!;
  expect(run.state).toBe('RUNNING');

  controller.abort('changed my mind');
  expect(await settled).toMatch(/changed my mind/);
  const ended = await waitForRun(t, run.uid, alice.token);
  expect(ended.state).toBe('EXCEPTION');
  expect(ended.error.code).toBe('Canceled');
  expect(await ledgerRows(run.uid)).toBe(1);
});

/** One JSON-RPC message POSTed to /mcp; the answer read from its SSE stream (or JSON). */
async function rpc(
  token: string,
  message: Record<string, unknown>,
  sessionId?: string,
  url = t.url,
): Promise<{ status: number; headers: Headers; result: any }> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
  });
  const text = await res.text();
  const data = text
    .split('\n')
    // The stream opens with a priming event (an id, `retry` and empty data).
    .filter((line) => line.startsWith('data: ') && line.trim() !== 'data:')
    .map((line) => JSON.parse(line.slice(6)) as { id?: unknown; result?: unknown });
  const answer = data.find((m) => m.id === message.id) ?? (text.startsWith('{') ? JSON.parse(text) : undefined);
  return { status: res.status, headers: res.headers, result: answer?.result };
}

async function session(token: string): Promise<string> {
  const init = await rpc(token, {
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  const sessionId = init.headers.get('mcp-session-id')!;
  expect(sessionId).toBeTruthy();
  return sessionId;
}

test('a call is idempotent per request id within a session: the same id again answers the same run', async () => {
  const alice = await makeUser();
  const { circuit } = await makeCircuit(alice, { name: 'hello' });
  const call = { id: 7, method: 'tools/call', params: { name: toolName(alice, circuit), arguments: { name: 'Ada' } } };
  const first = await session(alice.token);
  const a = await rpc(alice.token, call, first);
  const again = await rpc(alice.token, call, first);
  expect(a.result.structuredContent).toEqual({ output: 'HELLO ADA' });
  expect(again.result._meta.run_uid).toBe(a.result._meta.run_uid);
  expect(await ledgerRows(a.result._meta.run_uid)).toBe(1);

  // Another session numbers its requests from the start too: its id 7 is another call.
  const other = await rpc(alice.token, call, await session(alice.token));
  expect(other.result._meta.run_uid).not.toBe(a.result._meta.run_uid);
  expect(await CircuitRun.count({ where: { user_uid: alice.user.uid } })).toBe(2);
});

test('a client that only drops the connection leaves the run running: a disconnection is no cancellation', async () => {
  const alice = await makeUser();
  const { circuit } = await makeRunnableCircuit(alice, holding.holdDefinition());
  const sessionId = await session(alice.token);
  const controller = new AbortController();
  const dropped = fetch(`${t.url}/mcp`, {
    method: 'POST',
    signal: controller.signal,
    headers: {
      authorization: `Bearer ${alice.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      'mcp-session-id': sessionId,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: toolName(alice, circuit), arguments: {} },
    }),
  })
    .then((res) => res.text())
    .catch(() => 'dropped');
  await holding.untilHeld(holding.held.length + 1);
  controller.abort();
  expect(await dropped).toBe('dropped');
  const run = (await CircuitRun.findOne({ where: { user_uid: alice.user.uid } }))!;
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect((await CircuitRun.findByPk(run.uid))!.state).toBe('RUNNING');
  holding.release();
  expect((await waitForRun(t, run.uid, alice.token)).state).toBe('COMPLETED');
});

test("a cancel that reaches another API process cancels the run, found by the call's idempotency key", async () => {
  second = await startTestApp({ runWorker: false }, { databaseUrl: t.databaseUrl });
  const alice = await makeUser();
  const { circuit } = await makeRunnableCircuit(alice, holding.holdDefinition());
  const sessionId = await session(alice.token);
  const answer = rpc(
    alice.token,
    { id: 3, method: 'tools/call', params: { name: toolName(alice, circuit), arguments: {} } },
    sessionId,
  );
  await holding.untilHeld(holding.held.length + 1);

  const cancel = await rpc(
    alice.token,
    { method: 'notifications/cancelled', params: { requestId: 3, reason: 'stop' } },
    sessionId,
    second.url,
  );
  expect(cancel.status).toBe(202);
  // The first process was waiting on the run: it answers once the run has ended.
  const { result } = await answer;
  expect(result.isError).toBe(true);
  expect(result.content[0].text).toMatch(/^Canceled: /);
  const ended = await waitForRun(t, result._meta.run_uid, alice.token);
  expect(ended.error.code).toBe('Canceled');
  expect(await ledgerRows(ended.uid)).toBe(1);
});
