import { QueryTypes } from 'sequelize';
import { startTestApp, TestApp } from './support/app';
import { makeCircuit, makeUser, publishPorts, TestUser } from './support/factories';
import { makeRunnableCircuit, startHttpTarget, submitRun, waitForRun } from './support/run-factories';
import { startScriptedModel, type AgentModelRequest, type ScriptedReply } from './support/fake-agent-model';
import { engineDeps } from './support/engine-deps';
import { CircuitRun } from '../src/models/CircuitRun';
import { CreditLedger } from '../src/models/CreditLedger';
import { publishVersion } from '../src/commands/publish-version';
import type { CircuitDefinition, StepDefinition } from '../src/domain/definition';
import { executeDefinition } from '../src/engine/run-executor';
import { ExecutionFailure, type StepEvent } from '../src/engine/run-control';
import { explainDefinition } from '../src/engine/explain';
import { agentTurnTokenBound, conversationLimit } from '../src/engine/steps/agent';
import type { Circuit } from '../src/models';

/**
 * The `agent` step against a scripted OpenAI-compatible model: tool calls (one and several in a turn), the
 * final answer, what goes back to the model (results, and errors as text), the bounds a bad model or a bad
 * tool cannot pass, the publish checks, approvals of tool calls, money, replays and the step cache.
 */

let t: TestApp;
let owner: TestUser;
let script: (request: AgentModelRequest, index: number) => ScriptedReply = () => ({ content: 'no script' });
let base = 0;
const model = { requests: [] as AgentModelRequest[], baseUrl: '', close: async () => {} };
let target: Awaited<ReturnType<typeof startHttpTarget>>;
let add: { circuit: Circuit };
let shout: { circuit: Circuit };
let big: { circuit: Circuit };

/** The script of the next requests, counted from 0 for this test. */
function plan(next: (request: AgentModelRequest, index: number) => ScriptedReply) {
  base = model.requests.length;
  script = next;
}
const requestsSincePlan = () => model.requests.slice(base);

beforeAll(async () => {
  Object.assign(model, await startScriptedModel((request, index) => script(request, index - base)));
  target = await startHttpTarget((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/weather')
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ city: url.searchParams.get('city'), temperature: 21 }));
    if (url.pathname === '/huge') return void res.writeHead(200).end(Buffer.alloc(2 * 1024 * 1024, 97));
    if (url.pathname === '/orders')
      return void res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
    res.writeHead(500).end('broken');
  });
  // Runs that wait for a person park after a second (and resume from their journal when decided).
  t = await startTestApp({ openaiBaseUrl: model.baseUrl, openaiApiKey: 'sk-test', runParkAfterSeconds: 1 });
  owner = await makeUser({ credits: 10_000 });
  add = await makeCircuit(
    owner,
    { description: 'Adds two numbers' },
    {
      query_schema: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
      steps: [{ id: 'sum', kind: 'transform', expression: 'input.a + input.b' }],
    },
  );
  shout = await makeCircuit(
    owner,
    { description: 'Upper-cases a text' },
    {
      query_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      steps: [{ id: 'up', kind: 'transform', expression: '$uppercase(input.text)' }],
    },
  );
  big = await makeCircuit(
    owner,
    { description: 'Makes a long text' },
    {
      query_schema: { type: 'object', properties: { size: { type: 'integer' } }, required: ['size'] },
      steps: [{ id: 'pad', kind: 'transform', expression: '$pad("", input.size, "x")' }],
    },
  );
});
afterAll(async () => {
  await t.close();
  await target.close();
  await model.close();
});

const anyObject: CircuitDefinition['query_schema'] = { type: 'object' };

function agent(fields: Partial<StepDefinition> = {}): CircuitDefinition {
  return {
    query_schema: anyObject,
    steps: [
      {
        id: 'helper',
        kind: 'agent',
        model: 'gpt-agent',
        system: 'You are careful.',
        prompt: 'Work on {{input.task}}',
        tools: [
          { name: 'add', circuit_uid: add.circuit.uid },
          { name: 'shout', circuit_uid: shout.circuit.uid, description: 'Shouts' },
        ],
        ...fields,
      },
    ],
  };
}

async function run(definition: CircuitDefinition, input: Record<string, unknown> = { task: 'x' }, body = {}) {
  const { adaptorUid } = await makeRunnableCircuit(owner, definition);
  const submitted = await submitRun(t, owner.token, adaptorUid, { input, ...body });
  expect(submitted.status).toBe(200);
  return waitForRun(t, submitted.body.payload.uid, owner.token, 30_000);
}

/** The run's step events, in order (its event log is written before the run's end is answered). */
async function stepEvents(uid: string): Promise<StepEvent[]> {
  const rows = await CircuitRun.sequelize!.query<{ data: StepEvent }>(
    `SELECT data FROM circuit_run_events WHERE run_uid = $1 AND kind = 'step' ORDER BY seq`,
    { bind: [uid], type: QueryTypes.SELECT },
  );
  return rows.map((r) => r.data);
}

const toolMessages = (request: AgentModelRequest) => request.messages.filter((m) => m.role === 'tool');

test('two circuit tools called in parallel, then a final answer: results go back by call id; turns and tool runs are charged and journaled', async () => {
  plan((request, i) =>
    i === 0
      ? {
          tool_calls: [
            { id: 'call_a', name: 'add', arguments: '{"a": 2, "b": 3}' },
            { id: 'call_b', name: 'shout', arguments: '{"text": "hi"}' },
          ],
        }
      : {
          content: `done: ${toolMessages(request)
            .map((m) => m.content)
            .join(', ')}`,
        },
  );
  const result = await run(agent(), { task: 'sums' });
  expect(result.state).toBe('COMPLETED');
  expect(result.result_blob.output).toEqual({ answer: 'done: 5, HI', turns: 2, tool_calls: 2 });

  const [first, second] = requestsSincePlan();
  expect(first.model).toBe('gpt-agent');
  expect(first.messages).toEqual([
    { role: 'system', content: 'You are careful.' },
    { role: 'user', content: 'Work on sums' },
  ]);
  expect(first.tools).toEqual([
    {
      type: 'function',
      function: {
        name: 'add',
        description: 'Adds two numbers',
        parameters: {
          type: 'object',
          properties: { a: { type: 'number' }, b: { type: 'number' } },
          required: ['a', 'b'],
        },
      },
    },
    {
      type: 'function',
      function: {
        name: 'shout',
        description: 'Shouts',
        parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
    },
  ]);
  expect(second.messages.slice(2)).toEqual([
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'add', arguments: '{"a": 2, "b": 3}' } },
        { id: 'call_b', type: 'function', function: { name: 'shout', arguments: '{"text": "hi"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_a', content: '5' },
    // A text result goes back as it is, anything else as JSON.
    { role: 'tool', tool_call_id: 'call_b', content: 'HI' },
  ]);

  // Two turns of 600 tokens (1 credit each) and two tool runs (1 base credit each, free steps).
  expect(result.result_blob.steps.helper).toMatchObject({
    kind: 'agent',
    credits: 4,
    usage: { prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200 },
  });
  const charge = await CreditLedger.findOne({ where: { run_uid: result.uid } });
  expect(Number(charge!.cost)).toBe(5);

  const rows = await CircuitRun.sequelize!.query<{ path: string; credits: number }>(
    `SELECT path, credits FROM circuit_run_steps WHERE run_uid = $1 AND status = 'completed' ORDER BY path`,
    { bind: [result.uid], type: QueryTypes.SELECT },
  );
  expect(rows.map((r) => r.path)).toEqual([
    'helper/turn-1',
    'helper/turn-1.call-call_a',
    'helper/turn-1.call-call_b',
    'helper/turn-2',
  ]);

  const agentEvents = (await stepEvents(result.uid)).filter((e) => e.step_id === 'helper');
  expect(agentEvents.map((e) => [e.status, e.turn, e.tool, e.call_id])).toEqual([
    ['started', undefined, undefined, undefined],
    ['agent_turn', 1, undefined, undefined],
    ['tool_call', 1, 'add', 'call_a'],
    ['tool_call', 1, 'shout', 'call_b'],
    ...(agentEvents[4].call_id === 'call_a'
      ? [
          ['tool_result', 1, 'add', 'call_a'],
          ['tool_result', 1, 'shout', 'call_b'],
        ]
      : [
          ['tool_result', 1, 'shout', 'call_b'],
          ['tool_result', 1, 'add', 'call_a'],
        ]),
    ['agent_turn', 2, undefined, undefined],
    ['completed', undefined, undefined, undefined],
  ]);
});

test('http tools: GET arguments become the query string, POST arguments the JSON body; the response goes back to the model', async () => {
  plan((request, i) =>
    i === 0
      ? {
          tool_calls: [
            { id: 'w', name: 'weather', arguments: '{"city": "Oslo"}' },
            { id: 'o', name: 'order', arguments: '{"item": "tea", "count": 2}' },
          ],
        }
      : {
          content: toolMessages(request)
            .map((m) => m.content)
            .join(' | '),
        },
  );
  const before = target.requests.length;
  const result = await run(
    agent({
      tools: [
        {
          name: 'weather',
          description: 'The weather in a city',
          input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          http: { method: 'GET', url: `${target.url}/weather` },
        },
        {
          name: 'order',
          description: 'Orders an item',
          input_schema: { type: 'object', properties: { item: { type: 'string' }, count: { type: 'integer' } } },
          http: { method: 'POST', url: `${target.url}/orders`, headers: { 'X-Task': '{{input.task}}' } },
        },
      ],
    }),
    { task: 'errands' },
  );
  expect(result.state).toBe('COMPLETED');
  expect(result.result_blob.output.answer).toBe('{"city":"Oslo","temperature":21} | {"ok":true}');
  const calls = target.requests.slice(before);
  expect(calls.find((c) => c.url.startsWith('/weather'))).toMatchObject({ method: 'GET', url: '/weather?city=Oslo' });
  const order = calls.find((c) => c.url === '/orders')!;
  expect(order).toMatchObject({ method: 'POST', body: '{"item":"tea","count":2}' });
  expect(order.headers['x-task']).toBe('errands');
  expect(order.headers['content-type']).toBe('application/json');
});

test('a model that names an unknown tool, sends malformed JSON or arguments that do not fit is told so, and can still answer', async () => {
  plan((request, i) =>
    i === 0
      ? {
          tool_calls: [
            { id: 'c1', name: 'multiply', arguments: '{}' },
            { id: 'c2', name: 'add', arguments: '{"a": 1, "b":' },
            { id: 'c3', name: 'add', arguments: '{"a": "one", "b": 2}' },
            { id: 'c4', name: 'add', arguments: '[1, 2]' },
          ],
        }
      : { content: 'gave up politely' },
  );
  const result = await run(agent());
  expect(result.state).toBe('COMPLETED');
  expect(result.result_blob.output).toEqual({ answer: 'gave up politely', turns: 2, tool_calls: 4 });
  const told = toolMessages(requestsSincePlan()[1]).map((m) => m.content);
  expect(told[0]).toBe('Error: there is no tool named "multiply"; the tools are add, shout');
  expect(told[1]).toMatch(/^Error: the arguments are not valid JSON \(.+\): "\{\\"a\\": 1, \\"b\\":"$/);
  expect(told[2]).toBe('Error: arguments.a must be number');
  expect(told[3]).toBe('Error: the arguments must be a JSON object');
  // Nothing ran: no tool run was charged.
  expect(result.result_blob.steps.helper.credits).toBe(2);
});

test('max_turns model calls without a final answer end the run AgentTurnLimit, naming the last tool error', async () => {
  plan(() => ({ tool_calls: [{ name: 'add', arguments: '{"a": 1}' }] }));
  const result = await run(agent({ max_turns: 3 }));
  expect(result.state).toBe('EXCEPTION');
  expect(result.error).toMatchObject({ code: 'AgentTurnLimit', step_id: 'helper' });
  expect(result.error.message).toMatch(
    /agent step helper: the model still called tools after max_turns \(3\) turns, without a final answer; the last tool error: add: arguments\.b is required/,
  );
  expect(requestsSincePlan()).toHaveLength(3);
  // The three turns are paid for.
  const charge = await CreditLedger.findOne({ where: { run_uid: result.uid } });
  expect(Number(charge!.cost)).toBe(4);
});

test('10,000 tool calls in one turn are cut off at the per-turn limit: the run ends with a clear error, no tool runs', async () => {
  plan(() => ({
    tool_calls: Array.from({ length: 10_000 }, (_, i) => ({ id: `c${i}`, name: 'add', arguments: '{"a":1,"b":2}' })),
  }));
  const result = await run(agent());
  expect(result.state).toBe('EXCEPTION');
  expect(result.error.code).toBe('StepFailed');
  expect(result.error.message).toBe(
    'agent step helper: the model asked for more than 20 tool calls in one turn; it was cut off there',
  );
  const rows = await CircuitRun.sequelize!.query(`SELECT path FROM circuit_run_steps WHERE run_uid = $1`, {
    bind: [result.uid],
    type: QueryTypes.SELECT,
  });
  expect(rows).toEqual([]);
});

test('output_schema: the answer is parsed and checked; the model is told the schema; a bad answer ends OutputContractViolation', async () => {
  const schema = {
    type: 'object',
    properties: { total: { type: 'number' } },
    required: ['total'],
  };
  plan((request, i) =>
    i === 0
      ? { tool_calls: [{ name: 'add', arguments: '{"a": 20, "b": 22}' }] }
      : { content: '```json\n{"total": 42}\n```' },
  );
  const ok = await run(agent({ output_schema: schema }));
  expect(ok.state).toBe('COMPLETED');
  expect(ok.result_blob.output).toEqual({ answer: { total: 42 }, turns: 2, tool_calls: 1 });
  expect(requestsSincePlan()[0].messages[0].content).toContain(
    'must be JSON only, matching this JSON Schema: {"type":"object"',
  );

  plan(() => ({ content: '{"total": "many"}' }));
  const wrong = await run(agent({ output_schema: schema }));
  expect(wrong.error).toMatchObject({ code: 'OutputContractViolation' });
  expect(wrong.error.message).toBe(
    "agent step helper: the model's final answer does not match output_schema: answer.total must be number",
  );

  plan(() => ({ content: 'forty-two' }));
  const prose = await run(agent({ output_schema: schema }));
  expect(prose.error.code).toBe('OutputContractViolation');
  expect(prose.error.message).toMatch(/the model's final answer is not JSON/);
});

test('tool results are bounded: a 2 MiB http response, a result past the conversation limit and a 50 MB one go back as errors', async () => {
  plan((request, i) =>
    i === 0
      ? {
          tool_calls: [
            { id: 'h', name: 'huge', arguments: '{}' },
            { id: 'b', name: 'big', arguments: '{"size": 300000}' },
            { id: 'f', name: 'big', arguments: '{"size": 50000000}' },
          ],
        }
      : {
          content: toolMessages(request)
            .map((m) => m.content)
            .join(' | '),
        },
  );
  const result = await run(
    agent({
      tools: [
        {
          name: 'huge',
          description: 'A very large document',
          input_schema: { type: 'object' },
          http: { method: 'GET', url: `${target.url}/huge` },
        },
        { name: 'big', circuit_uid: big.circuit.uid },
      ],
    }),
  );
  expect(result.state).toBe('COMPLETED');
  const [huge, large, fifty] = String(result.result_blob.output.answer).split(' | ');
  expect(huge).toBe('Error: the response is larger than 1048576 bytes');
  expect(large).toMatch(/^Error: the result is 300000 bytes, more than the \d+ bytes left in this conversation$/);
  // 50 MB never exists: the tool circuit's step fails at the run's result limit, and the model is told.
  expect(fifty).toMatch(/^Error: circuit \S+ failed \(StepFailed\): transform step pad: .*(larger than|more than)/);
  expect(result.result_blob.steps.helper.output.tool_calls).toBe(3);
});

describe('publish checks', () => {
  let circuitUid: string;
  beforeAll(async () => {
    circuitUid = (await makeCircuit(owner, {}, null)).circuit.uid;
  });
  const publish = (definition: unknown, uid = circuitUid) =>
    t.rest('POST', `/circuits/${uid}/versions`, { token: owner.token, body: definition });
  const refusal = async (definition: unknown, uid?: string) => {
    const res = await publish(definition, uid);
    expect(res.status).toBe(400);
    return res.body.error.message as string;
  };
  const circuitTool = (name: string) => ({ name, circuit_uid: add.circuit.uid });

  test('tool lists, names and shapes', async () => {
    expect(await refusal(agent({ tools: [] }))).toBe('step helper.tools must list at least 1 tool');
    expect(await refusal(agent({ tools: Array.from({ length: 21 }, (_, i) => circuitTool(`t${i}`)) }))).toBe(
      'step helper.tools may list at most 20 tools',
    );
    expect(await refusal(agent({ tools: [circuitTool('same'), circuitTool('same')] }))).toBe(
      'step helper.tools[1].name: duplicate tool name same',
    );
    expect(await refusal(agent({ tools: [circuitTool('no spaces')] }))).toBe(
      'step helper.tools[0].name must match ^[a-zA-Z0-9_-]{1,64}$ (got "no spaces")',
    );
    expect(await refusal(agent({ tools: [circuitTool('x'.repeat(65))] }))).toMatch(/tools\[0\]\.name must match/);
    expect(await refusal(agent({ tools: [{ name: 'nothing' }] }))).toBe(
      'step helper.tools[0]: a tool has exactly one of circuit_uid (a circuit tool) and http (an http tool)',
    );
    expect(
      await refusal(
        agent({ tools: [{ name: 'w', description: 'd', http: { method: 'GET', url: 'https://example.com' } }] }),
      ),
    ).toBe('step helper.tools[0].input_schema: an http tool needs one (its arguments are checked against it)');
    expect(
      await refusal(
        agent({
          tools: [
            {
              name: 'w',
              description: 'd',
              input_schema: { type: 'strng' },
              http: { method: 'GET', url: 'https://e.com' },
            },
          ],
        }),
      ),
    ).toMatch(/tools\[0\]\.input_schema/);
    expect(
      await refusal(
        agent({ tools: [{ ...circuitTool('a'), version_uid: add.circuit.primary_version_uid, alias: 'prod' }] }),
      ),
    ).toBe('step helper.tools[0].alias: a tool names a version_uid or an alias, not both');
    expect(await refusal(agent({ tools: [{ ...circuitTool('a'), alias: 'nope' }] }))).toMatch(
      /tools\[0\]\.alias is not an alias of circuit/,
    );
    expect(await refusal(agent({ tools: [{ ...circuitTool('a'), extra: 1 }] }))).toMatch(/Unknown field/);
    expect(await refusal(agent({ approve_tools: ['add', 'delete'] }))).toBe(
      'step helper.approve_tools: names no tool of this step: delete',
    );
    expect(await refusal(agent({ approve_tools: 'some' }))).toBe(
      'step helper.approve_tools: must be "all" or a list of tool names',
    );
    expect(await refusal(agent({ max_turns: 51 }))).toBe('step helper.max_turns must be an integer from 1 to 50');
    for (const bad of [0, 604_801, 'x', 1.5])
      expect(await refusal(agent({ approve_tools: 'all', approval_timeout_s: bad }))).toBe(
        'step helper.approval_timeout_s must be a whole number of seconds from 1 to 604800',
      );
    expect(await refusal(agent({ approval_timeout_s: 60 }))).toBe(
      'step helper.approval_timeout_s: applies to approve_tools, which this step does not have',
    );
    for (const good of [1, 604_800])
      expect((await publish(agent({ approve_tools: 'all', approval_timeout_s: good }))).status).toBe(200);
    expect(await refusal(agent({ output_schema: { type: 'object', properties: { a: { type: 'nmbr' } } } }))).toMatch(
      /step helper\.output_schema/,
    );
    expect(await refusal(agent({ prompt: '{{#if}}' }))).toMatch(/step helper\.prompt: template does not parse/);
    expect((await publish(agent())).status).toBe(200);
  });

  test('a tool circuit the author may not run is refused; so are cycles through tools', async () => {
    const stranger = await makeUser();
    const hidden = await makeCircuit(stranger, { isPrivate: true });
    expect(await refusal(agent({ tools: [{ name: 'secret', circuit_uid: hidden.circuit.uid }] }))).toBe(
      'step helper.tools[0].circuit_uid does not name a circuit you may run',
    );
    expect(await refusal(agent({ tools: [{ name: 'me', circuit_uid: circuitUid }] }))).toBe(
      'step helper.tools[0]: a circuit may not embed itself',
    );
    // X's agent calls Y; Y's agent calling X would close a loop.
    const x = await makeCircuit(owner, {}, agent({ tools: [{ name: 'y', circuit_uid: circuitUid }] }));
    expect(await refusal(agent({ tools: [{ name: 'x', circuit_uid: x.circuit.uid }] }))).toMatch(
      /embedding would form a cycle/,
    );
  });
});

test('approve_tools: a call waits for a person (waiting_for names the tool and its arguments); approved it runs, rejected the model is told', async () => {
  const definition = agent({ approve_tools: ['add'] });
  const { adaptorUid } = await makeRunnableCircuit(owner, definition);
  for (const approved of [true, false]) {
    plan((request, i) =>
      i === 0
        ? {
            tool_calls: [
              { id: 'c1', name: 'add', arguments: '{"a": 1, "b": 2}' },
              { id: 'c2', name: 'shout', arguments: '{"text": "go"}' },
            ],
          }
        : {
            content: toolMessages(request)
              .map((m) => m.content)
              .join(' | '),
          },
    );
    const submitted = await submitRun(t, owner.token, adaptorUid, { input: { task: 'x' } });
    const uid = submitted.body.payload.uid as string;
    let waiting: any;
    for (let i = 0; i < 400 && !waiting?.waiting_for; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      waiting = (await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token })).body.payload;
    }
    expect(waiting.state).toBe('RUNNING');
    expect(waiting.waiting_for).toEqual([
      {
        step_id: 'helper:c1',
        kind: 'approval',
        prompt: 'Allow the agent step helper to call the tool add with the arguments {"a":1,"b":2}?',
        expires_at: expect.any(String),
        decision_url: expect.stringContaining('/'),
      },
    ]);
    const decided = await t.rest('POST', `/circuit-runs/${uid}/approvals/helper:c1`, {
      token: owner.token,
      body: approved ? { approved: true } : { approved: false, comment: 'not today' },
    });
    expect(decided.status).toBe(200);
    const done = await waitForRun(t, uid, owner.token, 30_000);
    expect(done.state).toBe('COMPLETED');
    expect(done.result_blob.output.answer).toBe(
      approved ? '3 | GO' : 'Error: a person rejected this call: not today | GO',
    );
    const waitingEvents = (await stepEvents(uid)).filter((e) => e.status === 'waiting');
    expect(waitingEvents).toEqual([
      expect.objectContaining({
        step_id: 'helper:c1',
        kind: 'agent',
        for: 'approval',
        turn: 1,
        tool: 'add',
        call_id: 'c1',
      }),
    ]);
  }
});

test('max_credits is never crossed: the turn whose hold would cross it does not start (BudgetExceeded)', async () => {
  // Each turn holds 2 credits (its prompt and max_tokens 1000) and uses 600 tokens (1 credit); a tool run holds 1.
  plan(() => ({ tool_calls: [{ name: 'add', arguments: '{"a": 1, "b": 1}' }] }));
  const result = await run(agent({ max_tokens: 1000 }), { task: 'x' }, { max_credits: 4 });
  expect(result.state).toBe('EXCEPTION');
  expect(result.error.code).toBe('BudgetExceeded');
  expect(requestsSincePlan()).toHaveLength(1);
  const charge = await CreditLedger.findOne({ where: { run_uid: result.uid } });
  expect(Number(charge!.cost)).toBeLessThanOrEqual(4);
  // The finished turn and tool run are paid: base 1 + turn 1 + tool 1.
  expect(Number(charge!.cost)).toBe(3);
});

test('a recorded replay of an agent run makes no model request and calls no tool; the cache serves a second run', async () => {
  plan((request, i) =>
    i === 0
      ? {
          tool_calls: [
            { id: 'w', name: 'weather', arguments: '{"city": "Rome"}' },
            { id: 'a', name: 'add', arguments: '{"a": 4, "b": 4}' },
          ],
        }
      : {
          content: toolMessages(request)
            .map((m) => m.content)
            .join(' | '),
        },
  );
  const tools = [
    {
      name: 'weather',
      description: 'The weather in a city',
      input_schema: { type: 'object', properties: { city: { type: 'string' } } },
      http: { method: 'GET', url: `${target.url}/weather` },
    },
    { name: 'add', circuit_uid: add.circuit.uid },
  ];
  const original = await run(agent({ tools }), { task: 'trip' });
  expect(original.state).toBe('COMPLETED');
  expect(original.result_blob.output.answer).toBe('{"city":"Rome","temperature":21} | 8');
  const modelCalls = model.requests.length;
  const toolCalls = target.requests.length;

  const res = await t.rest('POST', `/circuit-runs/${original.uid}/replay`, { token: owner.token, body: {} });
  expect(res.status).toBe(200);
  const again = await waitForRun(t, res.body.payload.uid, owner.token, 30_000);
  expect(again.state).toBe('COMPLETED');
  expect(again.result_blob.output).toEqual(original.result_blob.output);
  expect(model.requests.length).toBe(modelCalls);
  expect(target.requests.length).toBe(toolCalls);
  expect(again.result_blob.steps.helper.credits).toBe(0);
  const replayed = (await stepEvents(again.uid)).filter((e) => e.status === 'agent_turn' || e.status === 'tool_result');
  expect(replayed.every((e) => e.replayed === true)).toBe(true);

  // With the step cache, a second run of the same request is answered from it.
  const cached = agent({ tools, cache: { ttl_s: 600 } });
  const first = await run(cached, { task: 'trip' });
  const before = model.requests.length;
  const beforeTools = target.requests.length;
  const second = await run(cached, { task: 'trip' });
  expect(second.result_blob.output).toEqual(first.result_blob.output);
  expect(model.requests.length).toBe(before);
  expect(target.requests.length).toBe(beforeTools);
  expect(second.result_blob.steps.helper.credits).toBe(0);
});

test('a circuit tool pinned to a version or an alias runs that version', async () => {
  const { circuit } = await makeCircuit(
    owner,
    { description: 'Combines two numbers' },
    {
      query_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
      steps: [{ id: 'sum', kind: 'transform', expression: 'input.a + input.b' }],
    },
  );
  const v1 = circuit.primary_version_uid!;
  const v2 = await publishVersion(publishPorts(), owner.user, circuit, {
    query_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
    steps: [{ id: 'product', kind: 'transform', expression: 'input.a * input.b' }],
  });
  const alias = await t.rest('PUT', `/circuits/${circuit.uid}/aliases/prod`, {
    token: owner.token,
    body: { routes: [{ version_uid: v2.uid, weight: 100 }] },
  });
  expect(alias.status).toBe(200);
  plan((request, i) =>
    i === 0
      ? {
          tool_calls: [
            { id: 'p', name: 'pinned', arguments: '{"a": 3, "b": 4}' },
            { id: 'r', name: 'released', arguments: '{"a": 3, "b": 4}' },
          ],
        }
      : {
          content: toolMessages(request)
            .map((m) => m.content)
            .join(' | '),
        },
  );
  const result = await run(
    agent({
      tools: [
        { name: 'pinned', circuit_uid: circuit.uid, version_uid: v1 },
        { name: 'released', circuit_uid: circuit.uid, alias: 'prod' },
      ],
    }),
  );
  expect(result.result_blob.output.answer).toBe('7 | 12');
});

test('an http tool to a private address is refused at run time, as the http step is', async () => {
  plan(() => ({ tool_calls: [{ name: 'inside', arguments: '{}' }] }));
  const definition = agent({
    tools: [
      {
        name: 'inside',
        description: 'An internal service',
        input_schema: { type: 'object' },
        http: { method: 'GET', url: `${target.url}/weather` },
      },
    ],
  });
  const before = target.requests.length;
  const failure = await executeDefinition(
    definition,
    { task: 'x' },
    {
      run: { uid: '00000000-0000-4000-8000-000000000002', userUid: owner.user.uid, circuitUid: 'c', versionUid: 'v' },
      deps: engineDeps(t.app, { httpStepAllowPrivate: false }),
      signal: new AbortController().signal,
      depth: 0,
      budget: { maxSteps: 1000, maxResultBytes: 4 * 1024 * 1024, hold: async () => true },
    },
  ).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(ExecutionFailure);
  expect((failure as ExecutionFailure).message).toBe(
    'agent step helper: tool inside: refusing to call 127.0.0.1: it is not a public address (private, loopback, link-local or reserved)',
  );
  expect(target.requests.length).toBe(before);
});

test('explain and the estimate know the agent step', async () => {
  const definition = agent({ approve_tools: 'all', max_turns: 4 });
  const text = explainDefinition(definition, (uid) => (uid === add.circuit.uid ? 'me/add' : undefined)).text;
  expect(text).toContain(
    `1. helper (agent): Lets the language model gpt-agent work on "Work on {{input.task}}" in up to 4 turns, calling the tools add (the circuit me/add), shout (the circuit ${shout.circuit.uid}); a person approves every tool call first (within 86400 s, else the call is rejected), using input task.`,
  );
  // approval_timeout_s sets how long each tool call's approval waits.
  expect(explainDefinition(agent({ approve_tools: ['add'], approval_timeout_s: 600 }), () => undefined).text).toContain(
    'a person approves each call of add first (within 600 s, else the call is rejected)',
  );

  const { adaptorUid } = await makeRunnableCircuit(owner, definition);
  const estimate = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/estimate`, {
    token: owner.token,
    body: { input: { task: 'x' } },
  });
  expect(estimate.status).toBe(200);
  const { min, max, steps } = estimate.body.payload;
  expect(min).toBe(1);
  // 4 turns of at most the whole conversation plus max_tokens (3 attempts each), 3 × 20 tool runs of 1 credit.
  const perTurn = Math.ceil((3 * agentTurnTokenBound(conversationLimit(4 * 1024 * 1024), 4, 1024)) / 1000);
  expect(steps.helper).toEqual({ min: 0, max: 4 * perTurn + 60 });
  expect(max).toBe(1 + steps.helper.max);
});

test('a run parked on a tool approval and canceled is charged what its finished turns and calls cost, each once', async () => {
  // A tool whose circuit embeds another: its call's credits include the embedded run's, recorded beneath it too.
  const wrapper = await makeCircuit(
    owner,
    { description: 'Adds, one level down' },
    {
      query_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
      steps: [{ id: 'inner', kind: 'circuit', circuit_uid: add.circuit.uid, input: { a: 1, b: 1 } }],
    },
  );
  plan(() => ({
    tool_calls: [
      { id: 'c1', name: 'add', arguments: '{"a": 1, "b": 2}' },
      { id: 'c2', name: 'wrapped', arguments: '{}' },
    ],
  }));
  const { adaptorUid } = await makeRunnableCircuit(
    owner,
    agent({
      approve_tools: ['add'],
      tools: [
        { name: 'add', circuit_uid: add.circuit.uid },
        { name: 'wrapped', circuit_uid: wrapper.circuit.uid },
      ],
    }),
  );
  const submitted = await submitRun(t, owner.token, adaptorUid, { input: { task: 'x' } });
  const uid = submitted.body.payload.uid as string;
  for (let i = 0; i < 400; i++) {
    const row = await CircuitRun.findByPk(uid);
    if (row?.parked_at) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  expect((await CircuitRun.findByPk(uid))!.parked_at).not.toBeNull();
  expect((await t.rest('POST', `/circuit-runs/${uid}/cancel`, { token: owner.token })).status).toBe(200);
  const ended = await waitForRun(t, uid, owner.token);
  expect(ended.state).toBe('EXCEPTION');
  expect(ended.error.code).toBe('Canceled');
  // Base 1, turn 1 (1), the wrapped call (its base 1 and its embedded run's 1): 4.
  const charge = await CreditLedger.findOne({ where: { run_uid: uid } });
  expect(Number(charge!.cost)).toBe(4);
});

test("webhook step messages: each turn and each tool call's events are messages of their own", async () => {
  const receiver = await startHttpTarget((_req, res) => res.writeHead(200).end());
  try {
    plan((request, i) =>
      i === 0
        ? {
            tool_calls: [
              { id: 'x1', name: 'add', arguments: '{"a": 1, "b": 1}' },
              { id: 'x2', name: 'shout', arguments: '{"text": "a"}' },
            ],
          }
        : { content: 'ok' },
    );
    const result = await run(
      agent(),
      { task: 'x' },
      { webhook: `${receiver.url}/hook`, webhook_events_filter: ['step'] },
    );
    expect(result.state).toBe('COMPLETED');
    const want = [
      'started',
      'agent_turn:1',
      'tool_call:x1',
      'tool_call:x2',
      'tool_result:x1',
      'tool_result:x2',
      'agent_turn:2',
      'completed',
    ];
    const deadline = Date.now() + 15_000;
    const seen = () =>
      receiver.requests
        .map((r) => (JSON.parse(r.body) as { data: { step: StepEvent } }).data.step)
        .map((step) =>
          [step.status, step.status === 'agent_turn' ? step.turn : step.call_id].filter((x) => x).join(':'),
        )
        .sort();
    while (seen().length < want.length && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen()).toEqual([...want].sort());
  } finally {
    await receiver.close();
  }
});
