import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, waitForRun } from './support/run-factories';
import { createApiToken } from '../src/commands/create-api-token';
import { CircuitRun } from '../src/models/CircuitRun';
import { baseToolName } from '../src/mcp/tool-names';

/**
 * RUN_RATE_LIMIT_PER_MINUTE holds on every path that creates runs: once a token has created its
 * runs of the minute, a query, a batch, a replay, a bulk replay and an MCP tool call (plain or as a
 * task) are each refused with the limit's answer, and none of them creates a run.
 */
const LIMIT = 5;

let t: TestApp;
let owner: TestUser;
let adaptorUid: string;
let toolName: string;
let endedRunUid: string;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestApp({ runRateLimitPerMinute: LIMIT });
  owner = await makeUser();
  const made = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  adaptorUid = made.adaptorUid;
  toolName = baseToolName(owner.username, made.circuit.name);
  // An ended run to replay, made with the owner's own token (its window is not the ones spent below).
  const first = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, {
    token: owner.token,
    body: { input: { name: 'Ada' } },
  });
  endedRunUid = first.body.payload.uid as string;
  await waitForRun(t, endedRunUid, owner.token);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await t.close();
});

const runsOfOwner = () => CircuitRun.count({ where: { user_uid: owner.user.uid } });

/** A fresh token whose window is spent: LIMIT queries accepted. */
async function spentToken(name: string): Promise<string> {
  const { token } = await createApiToken(owner.user, name);
  for (let i = 0; i < LIMIT; i++) {
    const res = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, {
      token,
      body: { input: { name: 'Ada' } },
    });
    expect(res.status).toBe(200);
  }
  return token;
}

async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'run-rate-every-path-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

const REST_PATHS: Array<[string, () => { path: string; body: unknown }]> = [
  ['a query', () => ({ path: `/circuit-adaptors/${adaptorUid}/query`, body: { input: { name: 'Ada' } } })],
  [
    'a batch',
    () => ({ path: `/circuit-adaptors/${adaptorUid}/batches`, body: { inputs: [{ name: 'A' }, { name: 'B' }] } }),
  ],
  ['a replay', () => ({ path: `/circuit-runs/${endedRunUid}/replay`, body: {} })],
  ['a bulk replay', () => ({ path: '/users/circuit-runs/replay', body: { filter: { state: 'COMPLETED' } } })],
];

test.each(REST_PATHS)('past the limit, %s is 429 RateLimited and creates no run', async (name, request) => {
  const token = await spentToken(`spent for ${name}`);
  const before = await runsOfOwner();
  const { path, body } = request();
  const refused = await t.rest('POST', path, { token, body });
  expect(refused.status).toBe(429);
  expect(refused.body.error.code).toBe('RateLimited');
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(await runsOfOwner()).toBe(before);
});

test('past the limit, a task-augmented MCP tools/call is refused with the limit and creates no run', async () => {
  const client = await mcpClient(await spentToken('spent for an MCP task'));
  const before = await runsOfOwner();
  const call = client.request(
    { method: 'tools/call', params: { name: toolName, arguments: { name: 'Ada' } } },
    CreateTaskResultSchema,
    { task: { ttl: 60_000 } },
  );
  const refusal = (await call.then(
    () => undefined,
    (error: unknown) => error,
  )) as McpError;
  expect(refusal).toBeInstanceOf(McpError);
  expect(refusal.message).toMatch(/RateLimited/);
  expect(refusal.data).toEqual({ code: 'RateLimited' });
  expect(await runsOfOwner()).toBe(before);
});

test('past the limit, a plain MCP tools/call answers the limit as a tool error and creates no run', async () => {
  const client = await mcpClient(await spentToken('spent for an MCP call'));
  const before = await runsOfOwner();
  const result = await client.callTool({ name: toolName, arguments: { name: 'Ada' } });
  expect(result.isError).toBe(true);
  expect(JSON.stringify(result.content)).toMatch(/RateLimited|rate limit/i);
  expect(await runsOfOwner()).toBe(before);
});
