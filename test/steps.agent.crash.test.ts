import type { ServerResponse } from 'node:http';
import { QueryTypes } from 'sequelize';
import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import {
  makeRunnableCircuit,
  ServiceProcess,
  spawnServiceProcess,
  startHttpTarget,
  submitRun,
  waitForRun,
} from './support/run-factories';
import { startScriptedModel } from './support/fake-agent-model';
import { CircuitRun } from '../src/models/CircuitRun';
import { CreditLedger } from '../src/models/CreditLedger';

/**
 * An agent step is durable turn by turn and call by call: a worker SIGKILLed in the middle of the loop
 * leaves the turns and tool calls it finished in the run's journal, and the worker that takes the run
 * over asks the model nothing twice, calls no finished tool again, and charges each once.
 */

jest.setTimeout(120_000);

let t: TestApp;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
let model: Awaited<ReturnType<typeof startScriptedModel>>;
const requests: Record<string, number> = {};
const held: ServerResponse[] = [];
let holdNext = true;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  // The model's script follows the conversation: the turn is one more than the assistant messages so far.
  model = await startScriptedModel((request) => {
    const turn = request.messages.filter((m) => m.role === 'assistant').length + 1;
    // The agent that asks first: a circuit tool call, then a call that waits for an approval.
    if (request.messages[0]?.content === 'Ask first') {
      if (turn === 1) return { tool_calls: [{ id: 'f', name: 'fetch', arguments: '{"what": "inner"}' }] };
      if (turn === 2) return { tool_calls: [{ id: 'a', name: 'ask', arguments: '{}' }] };
      return { content: 'done' };
    }
    if (turn === 1)
      return {
        tool_calls: [
          { id: 'f', name: 'fetch', arguments: '{"what": "inner"}' },
          { id: 'p', name: 'ping', arguments: '{}' },
        ],
      };
    if (turn === 2) return { tool_calls: [{ id: 's', name: 'slow', arguments: '{}' }] };
    return {
      content: request.messages
        .filter((m) => m.role === 'tool')
        .map((m) => m.content)
        .join(' | '),
    };
  });
  target = await startHttpTarget((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests[path] = (requests[path] ?? 0) + 1;
    if (path === '/slow' && holdNext) {
      held.push(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path }));
  });
  // This process only enqueues; the runs execute in two spawned worker processes.
  t = await startTestApp({ runWorker: false });
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await Promise.all(processes.map((p) => p.kill('SIGKILL')));
  await target.close();
  await model.close();
  await t.close();
});

const stepEvents = (uid: string) =>
  t.app.services.sequelize.query<{ step_id: string; status: string; turn: number | null; call_id: string | null }>(
    `SELECT data->>'step_id' AS step_id, data->>'status' AS status, (data->>'turn')::int AS turn, data->>'call_id' AS call_id
       FROM circuit_run_events WHERE run_uid = $1 AND kind = 'step' ORDER BY seq`,
    { bind: [uid], type: QueryTypes.SELECT },
  );

test('a worker SIGKILLed mid-loop: the next worker asks no finished turn again, calls no finished tool again, charges each once', async () => {
  const owner = await makeUser({ credits: 100 });
  const inner = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object', properties: { what: { type: 'string' } } },
    steps: [{ id: 'get', kind: 'http', method: 'GET', url: `${target.url}/{{input.what}}` }],
  });
  const httpTool = (name: string) => ({
    name,
    description: `Calls /${name}`,
    input_schema: { type: 'object' },
    http: { method: 'GET', url: `${target.url}/${name}` },
  });
  const { adaptorUid } = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [
      {
        id: 'helper',
        kind: 'agent',
        model: 'gpt-agent',
        prompt: 'Go',
        tools: [{ name: 'fetch', circuit_uid: inner.circuit.uid }, httpTool('ping'), httpTool('slow')],
      },
    ],
  });
  const env = { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'sk-test' };
  const workers = await Promise.all([
    spawnServiceProcess('worker', t.databaseUrl, env),
    spawnServiceProcess('worker', t.databaseUrl, env),
  ]);
  processes.push(...workers);

  const { body } = await submitRun(t, owner.token, adaptorUid, { input: {} });
  const uid = body.payload.uid as string;
  const deadline = Date.now() + 30_000;
  while (held.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(held.length).toBe(1); // a worker is inside turn 2's call, with turn 1 and its two calls finished
  while (!(await stepEvents(uid)).some((e) => e.status === 'tool_call' && e.call_id === 's') && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(model.requests).toHaveLength(2);
  const running = await CircuitRun.findByPk(uid);
  const holder = workers.find((w) => running!.worker?.endsWith(`:${w.proc.pid}`));
  expect(holder).toBeDefined();

  await holder!.kill('SIGKILL');
  holdNext = false;
  const run = await waitForRun(t, uid, owner.token, 90_000);
  expect(run.state).toBe('COMPLETED');
  expect(run.result_blob.output).toEqual({
    answer: '{"path":"/inner"} | {"path":"/ping"} | {"path":"/slow"}',
    turns: 3,
    tool_calls: 3,
  });
  expect((await CircuitRun.findByPk(uid))!.attempt).toBe(2);
  // Turns 1 and 2 were asked once; only turn 3 came after the takeover.
  expect(model.requests).toHaveLength(3);
  // Finished calls were not made again (the embedded run's http step neither); the call in flight was.
  expect(requests['/inner']).toBe(1);
  expect(requests['/ping']).toBe(1);
  expect(requests['/slow']).toBe(2);
  // One charge: base 1, three turns of 600 tokens (1 each), the circuit tool's run (1).
  const charges = await CreditLedger.findAll({ where: { run_uid: uid } });
  expect(charges).toHaveLength(1);
  expect(Number(charges[0].amount)).toBe(-5);
  const events = await stepEvents(uid);
  // The step had not finished, so the second attempt announces it again; its finished turns and calls it does not.
  expect(events.filter((e) => e.status === 'started')).toHaveLength(2);
  expect(events.filter((e) => e.status === 'agent_turn').map((e) => e.turn)).toEqual([1, 2, 3]);
  expect(
    events
      .filter((e) => e.status === 'tool_result')
      .map((e) => e.call_id)
      .sort(),
  ).toEqual(['f', 'p', 's']);
});

test('a parked run woken by its decision and canceled before any worker took it: the next worker ends it, charging what its journal finished once', async () => {
  const owner = await makeUser({ credits: 100 });
  const inner = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object', properties: { what: { type: 'string' } } },
    steps: [{ id: 'get', kind: 'http', method: 'GET', url: `${target.url}/{{input.what}}` }],
  });
  const { adaptorUid } = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [
      {
        id: 'helper',
        kind: 'agent',
        model: 'gpt-agent',
        prompt: 'Ask first',
        tools: [
          { name: 'fetch', circuit_uid: inner.circuit.uid },
          {
            name: 'ask',
            description: 'Asks',
            input_schema: { type: 'object' },
            http: { method: 'GET', url: `${target.url}/ask` },
          },
        ],
        approve_tools: ['ask'],
      },
    ],
  });
  // Only this test's workers (the last test's may still run).
  await Promise.all(processes.map((p) => p.kill('SIGKILL')));
  const env = { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'sk-test', RUN_PARK_AFTER_S: '0' };
  const first = await spawnServiceProcess('worker', t.databaseUrl, env);
  processes.push(first);
  const requestsBefore = model.requests.length;
  const uid = (await submitRun(t, owner.token, adaptorUid, { input: {} })).body.payload.uid as string;
  const deadline = Date.now() + 30_000;
  while (!(await CircuitRun.findByPk(uid))!.parked_at && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  expect((await CircuitRun.findByPk(uid))!.parked_at).not.toBeNull();
  await first.kill('SIGKILL');

  // The decision wakes it (queued, no worker holds it); the cancel finds no worker to tell.
  expect(
    (await t.rest('POST', `/circuit-runs/${uid}/approvals/helper:a`, { token: owner.token, body: { approved: true } }))
      .status,
  ).toBe(200);
  expect((await t.rest('POST', `/circuit-runs/${uid}/cancel`, { token: owner.token })).status).toBe(200);
  const woken = (await CircuitRun.findByPk(uid))!;
  expect([woken.state, woken.parked_at, woken.cancel_requested_at]).toEqual(['RUNNING', null, expect.any(Date)]);

  processes.push(await spawnServiceProcess('worker', t.databaseUrl, env));
  const run = await waitForRun(t, uid, owner.token, 60_000);
  expect(run.state).toBe('EXCEPTION');
  expect(run.error.code).toBe('Canceled');
  // Nothing ran after the cancel: two turns asked, the approved call never made.
  expect(model.requests.length - requestsBefore).toBe(2);
  expect(requests['/ask']).toBeUndefined();
  // Base 1, two turns of 600 tokens (1 each), the circuit tool's run (1): one charge, nothing left held.
  const charges = await CreditLedger.findAll({ where: { run_uid: uid } });
  expect(charges.map((c) => Number(c.amount))).toEqual([-4]);
  const [user] = await t.app.services.sequelize.query<{ credits: string; credits_held: string }>(
    'SELECT credits, credits_held FROM users WHERE uid = $1',
    { bind: [owner.user.uid], type: QueryTypes.SELECT },
  );
  expect([Number(user.credits), Number(user.credits_held)]).toEqual([96, 0]);
});
