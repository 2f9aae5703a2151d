import { QueryTypes } from 'sequelize';
import { startTestApp, TestApp } from './support/app';
import { makeCircuit, makeUser, TestUser } from './support/factories';
import {
  makeRunnableCircuit,
  startHoldingTarget,
  startHttpTarget,
  submitRun,
  waitForRun,
} from './support/run-factories';
import { startScriptedModel, type AgentModelRequest, type ScriptedReply } from './support/fake-agent-model';
import { CircuitRun } from '../src/models/CircuitRun';
import type { CircuitDefinition } from '../src/domain/definition';
import type { StepEvent } from '../src/engine/run-control';

/**
 * What a run pays when it stops while an agent step is partway: its finished model turns and tool calls
 * (an embedded tool run included), each once, never what did not run, and the rest of its hold released.
 * Stopped by its owner's cancel (REST, GraphQL, by filter) while parked on a tool approval or waiting on it
 * in memory, by its deadline while a tool call runs; and a tool approval that times out (the call counts as
 * rejected, the model goes on from the journal).
 *
 * The scripted model (stateless: each turn follows from the conversation): turn 1 calls the circuit tool
 * `add`, turn 2 the http tool `weather`, turn 3 the tool `shout`, which waits for an approval; turn 4
 * answers. Turns use 1,900, 2,900 and 3,900 tokens (2, 3 and 4 credits), the answer 600 (1 credit); `add`
 * is an embedded run (1 credit), `weather` costs nothing.
 */

jest.setTimeout(120_000);

const TURN_CREDITS = [2, 3, 4];
/** Base 1, three turns, the `add` call: what a run stopped at the approval pays. */
const STOPPED_AT_APPROVAL = 1 + 2 + 3 + 4 + 1;

let model: Awaited<ReturnType<typeof startScriptedModel>>;
let weather: Awaited<ReturnType<typeof startHttpTarget>>;
let holding: Awaited<ReturnType<typeof startHoldingTarget>>;
/** What turn 2 calls: `weather`, or `slow` (an http tool whose request is held open). */
let secondTool = 'weather';

const turnOf = (request: AgentModelRequest) => 1 + request.messages.filter((m) => m.role === 'assistant').length;

function script(request: AgentModelRequest): ScriptedReply {
  const turn = turnOf(request);
  const usage = (credits: number) => ({ prompt_tokens: credits * 1000 - 500, completion_tokens: 400 });
  if (turn === 1) return { tool_calls: [{ id: 'c1', name: 'add', arguments: '{"a": 2, "b": 3}' }], usage: usage(2) };
  if (turn === 2)
    return { tool_calls: [{ id: 'c2', name: secondTool, arguments: '{"city": "Oslo"}' }], usage: usage(3) };
  if (turn === 3) return { tool_calls: [{ id: 'c3', name: 'shout', arguments: '{"text": "hi"}' }], usage: usage(4) };
  const results = request.messages.filter((m) => m.role === 'tool').map((m) => m.content);
  return { content: results.join(' | ') };
}

beforeAll(async () => {
  model = await startScriptedModel((request) => script(request));
  weather = await startHttpTarget((req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ temperature: 21 })),
  );
  holding = await startHoldingTarget();
});
afterAll(async () => {
  await holding.close();
  await weather.close();
  await model.close();
});

interface Agent {
  user: TestUser;
  adaptorUid: string;
}

/** A user of its own (its balance and hold are the run's alone) with the agent circuit and its tool circuits. */
async function agentOfNewUser(fields: Record<string, unknown> = {}): Promise<Agent> {
  const user = await makeUser({ credits: 1_000 });
  const add = await makeCircuit(
    user,
    { description: 'Adds two numbers' },
    {
      query_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
      steps: [{ id: 'sum', kind: 'transform', expression: 'input.a + input.b' }],
    },
  );
  const shout = await makeCircuit(
    user,
    { description: 'Upper-cases a text' },
    {
      query_schema: { type: 'object', properties: { text: { type: 'string' } } },
      steps: [{ id: 'up', kind: 'transform', expression: '$uppercase(input.text)' }],
    },
  );
  const cityTool = (name: string, url: string) => ({
    name,
    description: 'The weather in a city',
    input_schema: { type: 'object', properties: { city: { type: 'string' } } },
    http: { method: 'GET', url },
  });
  const definition: CircuitDefinition = {
    query_schema: { type: 'object' },
    steps: [
      {
        id: 'helper',
        kind: 'agent',
        model: 'gpt-agent',
        prompt: 'Do the task',
        tools: [
          { name: 'add', circuit_uid: add.circuit.uid },
          cityTool('weather', `${weather.url}/weather`),
          cityTool('slow', `${holding.url}/hold`),
          { name: 'shout', circuit_uid: shout.circuit.uid },
        ],
        approve_tools: ['shout'],
        ...fields,
      },
    ],
  };
  const { adaptorUid } = await makeRunnableCircuit(user, definition);
  return { user, adaptorUid };
}

async function start(t: TestApp, agent: Agent, body: Record<string, unknown> = {}): Promise<string> {
  const submitted = await submitRun(t, agent.user.token, agent.adaptorUid, { input: {}, ...body });
  expect(submitted.status).toBe(200);
  return submitted.body.payload.uid as string;
}

async function until<T>(what: string, read: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const runRow = (uid: string) => CircuitRun.findByPk(uid);

/** Until the run waits on the approval of its call c3 (its row says so: parked, or paused in memory). */
async function untilWaitingOnApproval(uid: string, parked: boolean): Promise<void> {
  await until(`run ${uid} waits on its tool approval`, async () => {
    const [row] = await CircuitRun.sequelize!.query<{ status: string; parked: boolean; paused: boolean }>(
      `SELECT s.status, r.parked_at IS NOT NULL AS parked, r.paused_at IS NOT NULL AS paused
         FROM circuit_run_steps s JOIN circuit_runs r ON r.uid = s.run_uid
        WHERE s.run_uid = $1 AND s.path = 'helper:c3'`,
      { bind: [uid], type: QueryTypes.SELECT },
    );
    return row?.status === 'waiting' && row.paused && row.parked === parked;
  });
}

/** The run's step events, in order. */
async function stepEvents(uid: string): Promise<StepEvent[]> {
  const rows = await CircuitRun.sequelize!.query<{ data: StepEvent }>(
    `SELECT data FROM circuit_run_events WHERE run_uid = $1 AND kind = 'step' ORDER BY seq`,
    { bind: [uid], type: QueryTypes.SELECT },
  );
  return rows.map((r) => r.data);
}

/**
 * The ledger has one charge for the run, of `cost` (the run's credits_cost); the user's balance went down by
 * it and nothing stays held (the run's hold was released whole).
 */
async function expectChargedOnce(agent: Agent, uid: string, cost: number): Promise<void> {
  const run = (await runRow(uid))!;
  const ledger = await CircuitRun.sequelize!.query<{ cost: string; amount: string }>(
    `SELECT cost, amount FROM credit_ledger WHERE run_uid = $1`,
    { bind: [uid], type: QueryTypes.SELECT },
  );
  expect(ledger.map((row) => [Number(row.cost), Number(row.amount)])).toEqual([[cost, -cost]]);
  const [user] = await CircuitRun.sequelize!.query<{ credits: string; credits_held: string }>(
    `SELECT credits, credits_held FROM users WHERE uid = $1`,
    { bind: [agent.user.user.uid], type: QueryTypes.SELECT },
  );
  expect([Number(user.credits), Number(user.credits_held)]).toEqual([1_000 - cost, 0]);
  expect(Number(run.credits_cost)).toBe(cost);
}

/** Turns announced with their credits, and the tool calls that finished with theirs. */
async function finishedSubSteps(uid: string) {
  const events = await stepEvents(uid);
  return {
    turns: events.filter((e) => e.status === 'agent_turn').map((e) => [e.turn, e.credits]),
    calls: events.filter((e) => e.status === 'tool_result').map((e) => [e.tool, e.credits, e.error ?? null]),
  };
}

const requestsOfRun = (since: number) => model.requests.slice(since).map(turnOf);

describe('parked on a tool approval', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Runs whose steps in flight all wait park at once.
    t = await startTestApp({ openaiBaseUrl: model.baseUrl, openaiApiKey: 'sk-test', runParkAfterSeconds: 0 });
  });
  afterAll(async () => {
    await t.close();
  });

  const cancels: Record<string, (t: TestApp, agent: Agent, uid: string) => Promise<void>> = {
    'POST /circuit-runs/{uid}/cancel': async (app, agent, uid) => {
      const res = await app.rest('POST', `/circuit-runs/${uid}/cancel`, { token: agent.user.token });
      expect(res.status).toBe(200);
    },
    'GraphQL cancelCircuitRun': async (app, agent, uid) => {
      const res = await app.gql(
        'mutation($uid: ID!) { cancelCircuitRun(uid: $uid) { uid } }',
        { uid },
        agent.user.token,
      );
      expect(res.errors).toBeUndefined();
    },
    'POST /users/circuit-runs/cancel (by filter)': async (app, agent) => {
      const res = await app.rest('POST', '/users/circuit-runs/cancel', {
        token: agent.user.token,
        body: { filter: { state: 'RUNNING' } },
      });
      expect(res.status).toBe(200);
      expect(res.body.payload).toMatchObject({ matched: 1, canceled: 1 });
    },
  };

  test.each(Object.keys(cancels))(
    'canceled by %s: its 3 finished turns and the add call are charged once each, the rest of its hold released',
    async (how) => {
      secondTool = 'weather';
      const agent = await agentOfNewUser();
      const since = model.requests.length;
      const uid = await start(t, agent);
      await untilWaitingOnApproval(uid, true);
      await cancels[how](t, agent, uid);
      const run = await waitForRun(t, uid, agent.user.token);
      expect(run.state).toBe('EXCEPTION');
      expect(run.error.code).toBe('Canceled');
      expect(await finishedSubSteps(uid)).toEqual({
        turns: [
          [1, TURN_CREDITS[0]],
          [2, TURN_CREDITS[1]],
          [3, TURN_CREDITS[2]],
        ],
        calls: [
          ['add', 1, null],
          ['weather', 0, null],
        ],
      });
      await expectChargedOnce(agent, uid, STOPPED_AT_APPROVAL);
      // Nothing ran again, nothing ran after the cancel.
      expect(requestsOfRun(since)).toEqual([1, 2, 3]);
    },
  );

  test('an approval that times out: the call counts as rejected, the model goes on from the journal; every turn and call charged once', async () => {
    secondTool = 'weather';
    const agent = await agentOfNewUser({ approval_timeout_s: 1 });
    const since = model.requests.length;
    const weatherCalls = weather.requests.length;
    const uid = await start(t, agent);
    const run = await waitForRun(t, uid, agent.user.token, 30_000);
    expect(run.state).toBe('COMPLETED');
    expect(run.result_blob.output).toEqual({
      answer: '5 | {"temperature":21} | Error: nobody approved this call within 1 s',
      turns: 4,
      tool_calls: 3,
    });
    // It parked on the approval and was woken by its expiry: a second attempt, which repeated nothing.
    expect((await runRow(uid))!.attempt).toBe(2);
    expect(requestsOfRun(since)).toEqual([1, 2, 3, 4]);
    expect(weather.requests.length - weatherCalls).toBe(1);
    expect(await finishedSubSteps(uid)).toEqual({
      turns: [
        [1, 2],
        [2, 3],
        [3, 4],
        [4, 1],
      ],
      calls: [
        ['add', 1, null],
        ['weather', 0, null],
        ['shout', 0, 'nobody approved this call within 1 s'],
      ],
    });
    expect(run.result_blob.steps.helper.credits).toBe(2 + 3 + 4 + 1 + 1);
    await expectChargedOnce(agent, uid, 1 + 2 + 3 + 4 + 1 + 1);
  });
});

describe('waiting in memory (not parked)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ openaiBaseUrl: model.baseUrl, openaiApiKey: 'sk-test', runParkAfterSeconds: 3600 });
  });
  afterAll(async () => {
    await t.close();
  });

  test('canceled while its worker waits on the tool approval: the finished turns and calls are charged once each', async () => {
    secondTool = 'weather';
    const agent = await agentOfNewUser();
    const since = model.requests.length;
    const uid = await start(t, agent);
    await untilWaitingOnApproval(uid, false);
    expect((await runRow(uid))!.parked_at).toBeNull();
    expect((await t.rest('POST', `/circuit-runs/${uid}/cancel`, { token: agent.user.token })).status).toBe(200);
    const run = await waitForRun(t, uid, agent.user.token);
    expect(run.state).toBe('EXCEPTION');
    expect(run.error.code).toBe('Canceled');
    await expectChargedOnce(agent, uid, STOPPED_AT_APPROVAL);
    expect(requestsOfRun(since)).toEqual([1, 2, 3]);
  });

  test('past its deadline while a tool call runs: the finished turns and the add call are charged, the unfinished call not', async () => {
    secondTool = 'slow';
    const agent = await agentOfNewUser();
    const since = model.requests.length;
    const held = holding.held.length;
    const uid = await start(t, agent, { deadline_s: 2 });
    await holding.untilHeld(held + 1);
    const run = await waitForRun(t, uid, agent.user.token);
    expect(run.state).toBe('EXCEPTION');
    expect(run.error.code).toBe('DeadlineExceeded');
    expect(await finishedSubSteps(uid)).toEqual({
      turns: [
        [1, 2],
        [2, 3],
      ],
      calls: [['add', 1, null]],
    });
    await expectChargedOnce(agent, uid, 1 + 2 + 3 + 1);
    expect(requestsOfRun(since)).toEqual([1, 2]);
  });
});
