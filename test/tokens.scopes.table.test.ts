import crypto from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, readSse, waitForRun } from './support/run-factories';
import { createApiToken, type TokenLimitsInput } from '../src/commands/create-api-token';
import { ApiToken, Circuit } from '../src/models';
import { TOKEN_SCOPES, type TokenScope } from '../src/domain/token-scopes';
import { ROOT_FIELD_SCOPES } from '../src/policies/token.policy';
import { ERROR_STATUS } from '../src/error-status';
import { isErrorCode, type ErrorCode } from '../src/errors';
import { baseToolName } from '../src/mcp/tool-names';
import { secondsToNextUtcDay } from '../src/credits/token-spend';
import { a2aClient, sendParams, userMessage } from './support/a2a';

// Token scopes: one answer per (token kind × operation), whichever transport carries it — REST, GraphQL
// over HTTP, graphql-sse, and MCP and A2A for the one operation they have (running a circuit).

let t: TestApp;
let owner: TestUser;
let circuit: Circuit;
let adaptorUid: string;
let other: Circuit;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestApp();
  owner = await makeUser();
  ({ circuit, adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION));
  ({ circuit: other } = await makeRunnableCircuit(owner, HELLO_DEFINITION));
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await t.close();
});

const unique = () => `n${crypto.randomBytes(4).toString('hex')}`;

async function tokenWith(limits: TokenLimitsInput): Promise<string> {
  return (await createApiToken(owner.user, 'table', limits)).token;
}

/** An answer as every transport can state it: ok, or an error code and its message. */
type Answer = 'ok' | { code: ErrorCode; message: string };

type Transport = 'rest' | 'graphql' | 'graphql-sse' | 'mcp' | 'a2a';

interface Operation {
  name: string;
  /** The scopes it needs, in the order they are checked. */
  needs: TokenScope[];
  runs?: boolean;
  rest(token: string): Promise<Answer>;
  /** A GraphQL document and its variables (sent over /graphql and /graphql/stream). */
  gql(): { query: string; variables: Record<string, unknown> };
}

function restAnswer(res: { status: number; body: any }): Answer {
  if (res.status < 300) return 'ok';
  const { code, message } = res.body.error as { code: ErrorCode; message: string };
  expect(ERROR_STATUS[code]).toBe(res.status);
  return { code, message };
}

function gqlAnswer(body: { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] }): Answer {
  const error = body.errors?.[0];
  if (!error) return 'ok';
  const code = error.extensions?.code;
  if (!isErrorCode(code)) throw new Error(`no error code: ${JSON.stringify(body)}`);
  return { code, message: error.message };
}

const OPERATIONS: Operation[] = [
  {
    name: 'start a run',
    needs: ['runs:write'],
    runs: true,
    rest: async (token) =>
      restAnswer(
        await t.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, { token, body: { input: { name: 'Ada' } } }),
      ),
    gql: () => ({
      query: 'mutation($a: ID!) { queryCircuitAdaptor(adaptorUid: $a, input: {name: "Ada"}) { uid } }',
      variables: { a: adaptorUid },
    }),
  },
  {
    name: 'read runs',
    needs: ['runs:read'],
    rest: async (token) => restAnswer(await t.rest('GET', '/users/circuit-runs', { token })),
    gql: () => ({ query: '{ viewerRuns { totalCount } }', variables: {} }),
  },
  {
    name: 'read a circuit',
    needs: ['circuits:read'],
    rest: async (token) => restAnswer(await t.rest('GET', `/circuits/${circuit.uid}`, { token })),
    gql: () => ({ query: 'query($u: ID!) { circuit(uid: $u) { uid } }', variables: { u: circuit.uid } }),
  },
  {
    name: 'create a circuit',
    needs: ['circuits:write'],
    rest: async (token) => restAnswer(await t.rest('POST', '/circuits', { token, body: { name: unique() } })),
    gql: () => ({
      query: 'mutation($n: String!) { createCircuit(input: {name: $n}) { uid } }',
      variables: { n: unique() },
    }),
  },
  {
    name: 'create a board',
    needs: ['boards:write'],
    rest: async (token) => restAnswer(await t.rest('POST', '/boards', { token, body: { name: unique() } })),
    gql: () => ({
      query: 'mutation($n: String!) { createBoard(input: {name: $n}) { uid } }',
      variables: { n: unique() },
    }),
  },
  {
    name: 'read the webhook secret',
    needs: ['webhooks:write'],
    rest: async (token) => restAnswer(await t.rest('GET', '/webhooks/default/secret', { token })),
    gql: () => ({ query: '{ webhookSecret { key } }', variables: {} }),
  },
  {
    name: 'create a schedule',
    // Its fires are runs of the token: it needs runs:write as well.
    needs: ['schedules:write', 'runs:write'],
    rest: async (token) =>
      restAnswer(
        await t.rest('POST', `/circuits/${circuit.uid}/schedules`, {
          token,
          body: { cron: '0 0 1 1 *', input: { name: 'Ada' } },
        }),
      ),
    gql: () => ({
      query:
        'mutation($c: ID!) { createCircuitSchedule(circuitUid: $c, cron: "0 0 1 1 *", input: {name: "Ada"}) { uid } }',
      variables: { c: circuit.uid },
    }),
  },
];

async function viaGraphql(token: string, op: Operation): Promise<Answer> {
  const { query, variables } = op.gql();
  return gqlAnswer(await t.gql(query, variables, token));
}

async function viaGraphqlSse(token: string, op: Operation): Promise<Answer> {
  const { query, variables } = op.gql();
  const res = await readSse(`${t.url}/graphql/stream`, { method: 'POST', token, body: { query, variables } });
  if (res.events.length === 0) return gqlAnswer(res.body);
  const next = res.events.find((event) => event.event === 'next');
  if (!next?.data) throw new Error(`no next event: ${res.raw}`);
  return gqlAnswer(JSON.parse(next.data));
}

async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'tokens-table', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function viaMcp(token: string): Promise<Answer> {
  let client: Client;
  try {
    client = await mcpClient(token);
  } catch (error) {
    // Refused before any MCP message: the same 401 envelope as REST.
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(error).toBeDefined();
    return restAnswer({ status: res.status, body: await res.json() });
  }
  const result = (await client.callTool({
    name: baseToolName(owner.username, circuit.name),
    arguments: { name: 'Ada' },
  })) as CallToolResult;
  if (!result.isError) return 'ok';
  const text = (result.content[0] as { text: string }).text;
  const match = /^(\w+): ([\s\S]*)$/.exec(text);
  if (!match || !isErrorCode(match[1])) throw new Error(`not an error answer: ${text}`);
  return { code: match[1], message: match[2] };
}

/** A2A: the card is fetched with the token (a refused token is the 401 envelope), then a message starts the run. */
async function viaA2a(token: string): Promise<Answer> {
  const card = await fetch(`${t.url}/.well-known/agent-card.json`, { headers: { authorization: `Bearer ${token}` } });
  if (card.status !== 200) return restAnswer({ status: card.status, body: await card.json() });
  const client = await a2aClient(t.url, token);
  try {
    await client.sendMessage(
      sendParams(
        userMessage({ data: { name: 'Ada' } }, { metadata: { skill_id: baseToolName(owner.username, circuit.name) } }),
        true,
      ),
    );
    return 'ok';
  } catch (error) {
    const match = /^(\w+): ([\s\S]*)$/.exec((error as Error).message);
    if (!match || !isErrorCode(match[1])) throw error;
    return { code: match[1], message: match[2] };
  }
}

async function answers(
  token: string,
  op: Operation,
): Promise<Record<Transport, Answer> | Record<Exclude<Transport, 'mcp' | 'a2a'>, Answer>> {
  const rest = await op.rest(token);
  const graphql = await viaGraphql(token, op);
  const sse = await viaGraphqlSse(token, op);
  return op.runs
    ? { rest, graphql, 'graphql-sse': sse, mcp: await viaMcp(token), a2a: await viaA2a(token) }
    : { rest, graphql, 'graphql-sse': sse };
}

/** The same answer on every transport of the operation. */
function same(answer: Answer, op: Operation): Record<string, Answer> {
  const transports: Transport[] = op.runs
    ? ['rest', 'graphql', 'graphql-sse', 'mcp', 'a2a']
    : ['rest', 'graphql', 'graphql-sse'];
  return Object.fromEntries(transports.map((transport) => [transport, answer]));
}

const lacks = (scope: TokenScope): Answer => ({ code: 'NotAllowed', message: `This token lacks the scope ${scope}` });

describe('every scope alone: the operations it names are allowed, the others 403 naming the missing scope', () => {
  const kinds: Array<{ kind: string; scopes: TokenScope[] | null }> = [
    { kind: 'no scopes given (all)', scopes: null },
    ...TOKEN_SCOPES.map((scope) => ({ kind: scope, scopes: [scope] })),
    { kind: 'schedules:write + runs:write', scopes: ['schedules:write', 'runs:write'] as TokenScope[] },
  ];
  test.each(kinds)('$kind', async ({ scopes }) => {
    const token = await tokenWith({ scopes });
    for (const op of OPERATIONS) {
      const missing = scopes === null ? undefined : op.needs.find((scope) => !scopes.includes(scope));
      expect({ op: op.name, answers: await answers(token, op) }).toEqual({
        op: op.name,
        answers: same(missing ? lacks(missing) : 'ok', op),
      });
    }
  });
});

test('an expired token is 401 on every operation and transport, saying when it expired', async () => {
  const token = await tokenWith({ expiresAt: new Date(Date.now() + 60_000) });
  const expiredAt = new Date(Date.now() - 1000);
  await ApiToken.update({ expires_at: expiredAt }, { where: { token_hash: crypto.hash('sha256', token, 'hex') } });
  const refusal: Answer = { code: 'Unauthorized', message: `The bearer token expired at ${expiredAt.toISOString()}` };
  for (const op of OPERATIONS)
    expect({ op: op.name, answers: await answers(token, op) }).toEqual({ op: op.name, answers: same(refusal, op) });
});

test('a circuit not on the allow-list: 403 naming it on every transport; other operations unaffected', async () => {
  const token = await tokenWith({ circuitUids: [other.uid] });
  for (const op of OPERATIONS) {
    const expected: Answer =
      op.name === 'start a run' || op.name === 'create a schedule'
        ? { code: 'NotAllowed', message: `This token may not run the circuit ${circuit.uid}` }
        : 'ok';
    expect({ op: op.name, answers: await answers(token, op) }).toEqual({ op: op.name, answers: same(expected, op) });
  }
});

test('the day cap reached: 429 RateLimited with Retry-After to the next UTC day on every transport', async () => {
  // HELLO costs 1 credit a run: a cap of 2 is two runs.
  const token = await tokenWith({ maxCreditsPerDay: 2 });
  const first = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, {
    token,
    body: { input: { name: 'Ada' } },
  });
  expect(first.status).toBe(200);
  expect(await waitForRun(t, first.body.payload.uid, token)).toMatchObject({ state: 'COMPLETED' });
  expect(await viaMcp(token)).toBe('ok');

  const refusal: Answer = {
    code: 'RateLimited',
    message: "This token's runs may take at most 2 credits per UTC day; retry after 00:00 UTC (Retry-After)",
  };
  const op = OPERATIONS[0];
  expect(await answers(token, op)).toEqual(same(refusal, op));

  const nextDay = secondsToNextUtcDay();
  const rest = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, {
    token,
    body: { input: { name: 'Ada' } },
  });
  expect(rest.status).toBe(429);
  expect(Math.abs(Number(rest.headers.get('retry-after')) - nextDay)).toBeLessThanOrEqual(5);
  // /graphql answers the same header beside its error.
  const gql = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(op.gql()),
  });
  expect(Math.abs(Number(gql.headers.get('retry-after')) - nextDay)).toBeLessThanOrEqual(5);
  expect(gqlAnswer((await gql.json()) as never)).toEqual(refusal);

  // Other operations are not affected, nor the user's other tokens.
  expect(restAnswer(await t.rest('GET', '/users/circuit-runs', { token }))).toBe('ok');
  expect(
    (
      await t.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, {
        token: owner.token,
        body: { input: { name: 'Ada' } },
      })
    ).status,
  ).toBe(200);
  const listed = await t.rest('GET', '/users/tokens?limit=100', { token: owner.token });
  expect(
    listed.body.data.find((row: { max_credits_per_day: number | null }) => row.max_credits_per_day === 2),
  ).toMatchObject({ credits_spent_today: 2 });
});

test('concurrent runs of a capped token never take it past its cap', async () => {
  const token = await tokenWith({ maxCreditsPerDay: 5 });
  const statuses = await Promise.all(
    Array.from({ length: 20 }, () =>
      t
        .rest('POST', `/circuit-adaptors/${adaptorUid}/query`, { token, body: { input: { name: 'Ada' } } })
        .then((r) => r.status),
    ),
  );
  expect(statuses.filter((s) => s === 200)).toHaveLength(5);
  expect(statuses.filter((s) => s === 429)).toHaveLength(15);
});

test('a limited token may not create tokens (it could mint one without its limits); a full one may', async () => {
  const limited = await tokenWith({ scopes: ['runs:read'] });
  const refused = await t.rest('POST', '/users/tokens', { token: limited, body: { label: 'escape' } });
  expect(refused.status).toBe(403);
  const created = await t.rest('POST', '/users/tokens', {
    token: owner.token,
    body: {
      label: 'ci',
      scopes: ['runs:write'],
      circuit_uids: [circuit.uid],
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    },
  });
  expect(created.status).toBe(200);
  expect(created.body.payload.api_token).toMatchObject({
    label: 'ci',
    scopes: ['runs:write'],
    circuit_uids: [circuit.uid],
  });
  // The new token does what it says.
  const run = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, {
    token: created.body.payload.token,
    body: { input: { name: 'Ada' } },
  });
  expect(run.status).toBe(200);
  expect((await t.rest('GET', `/circuits/${circuit.uid}`, { token: created.body.payload.token })).status).toBe(403);
});

test('every Mutation field is named in ROOT_FIELD_SCOPES or deliberately needs no scope', async () => {
  const res = await t.gql<{ __schema: { mutationType: { fields: { name: string }[] } } }>(
    '{ __schema { mutationType { fields { name } } } }',
  );
  const unscoped = res
    .data!.__schema.mutationType.fields.map((f) => f.name)
    .filter((name) => !ROOT_FIELD_SCOPES.Mutation[name]);
  // createApiToken has its own rule (tokenMayCreateTokens).
  expect(unscoped).toEqual(['createApiToken']);
});
