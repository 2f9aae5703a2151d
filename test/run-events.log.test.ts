import { useTestApp } from './support/app';
import { makeUser, HELLO_DEFINITION, TestUser } from './support/factories';
import { makeRunnableCircuit, readSse, submitRun } from './support/run-factories';
import { claimRun } from '../src/runs/transitions';
import { endRun, failedEnding } from '../src/runs/execute';
import { RunEventRecorder } from '../src/runs/events/recorder';
import { runDeps } from './support/run-deps';
import { RunEvent } from '../src/models/RunEvent';

jest.setTimeout(60_000);

/**
 * The event log as the job layer writes it (claim → recorder → end), read through REST SSE, the
 * GraphQL subscription and CircuitRun.events: gap-free seqs, coalesced output, and `error` inside
 * step events for the owner only.
 */
const t = useTestApp({ runWorker: false });
let owner: TestUser;
let other: TestUser;

beforeAll(async () => {
  owner = await makeUser();
  other = await makeUser();
});

/** A public run taken through a failing step by hand, as a worker would: returns its uid. */
async function runWithStepEvents(deltas: number): Promise<string> {
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const { body } = await submitRun(t, owner.token, adaptorUid, { input: { name: 'x' }, is_public: true });
  const uid = body.payload.uid as string;
  const deps = runDeps(t.app);
  const claim = await claimRun(deps.runService.claims, uid, 60_000, deps.bus.sqlChannel);
  expect(claim?.attempt).toBe(1);
  const recorder = new RunEventRecorder(deps, uid, 1);
  const started = new Date().toISOString();
  recorder.step({ step_id: 'greet', kind: 'template', status: 'started', started_at: started });
  for (let i = 0; i < deltas; i++) recorder.output('greet', `${i % 10}`);
  recorder.step({
    step_id: 'greet',
    kind: 'template',
    status: 'completed',
    started_at: started,
    ended_at: new Date().toISOString(),
    credits: 0,
  });
  recorder.step({ step_id: 'shout', kind: 'transform', status: 'started', started_at: started });
  recorder.output('shout', 'bad \u0000 text');
  recorder.step({
    step_id: 'shout',
    kind: 'transform',
    status: 'failed',
    started_at: started,
    ended_at: new Date().toISOString(),
    error: 'JSONata: secret detail',
  });
  // As the job does: what is not yet written is logged by the statement that ends the run.
  const rest = await recorder.closeForEnding();
  recorder.step({ step_id: 'late', kind: 'template', status: 'started', started_at: started }); // after close: dropped
  await recorder.flush();
  const ending = failedEnding(
    { uid, attempt: 1 },
    { code: 'StepFailed', message: 'step shout: JSONata: secret detail', step_id: 'shout' },
  );
  expect(await endRun(deps, { ...ending, events: rest })).toBe(true);
  return uid;
}

test('step and output events get gap-free seqs between the state events; deltas of a step are merged; nothing follows the terminal state', async () => {
  const uid = await runWithStepEvents(1_000);
  const rows = await RunEvent.findAll({ where: { run_uid: uid }, order: [['seq', 'ASC']] });
  expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
  expect(rows.map((r) => [r.kind, r.data.state ?? r.data.status ?? 'delta'])).toEqual([
    ['state', 'PROVISIONED'],
    ['state', 'RUNNING'],
    ['step', 'started'],
    ['output', 'delta'],
    ['step', 'completed'],
    ['step', 'started'],
    ['output', 'delta'],
    ['step', 'failed'],
    ['state', 'EXCEPTION'],
  ]);
  expect(String(rows[3].data.delta)).toHaveLength(1_000);
  expect(rows[6].data.delta).toBe('bad \uFFFD text');
});

test('REST ?events=state,step,output: the owner sees error inside step events, others and anonymous callers do not', async () => {
  const uid = await runWithStepEvents(3);
  const url = `${t.url}/api/v1/circuit-runs/${uid}/events?events=state,step,output`;
  const read = async (token?: string) => (await readSse(url, { token, headers: { 'last-event-id': '0' } })).events;
  const mine = await read(owner.token);
  expect(mine.map((e) => e.event)).toEqual([
    'state',
    'state',
    'step',
    'output',
    'step',
    'step',
    'output',
    'step',
    'state',
  ]);
  expect(JSON.parse(mine[7].data!)).toMatchObject({
    step_id: 'shout',
    status: 'failed',
    error: 'JSONata: secret detail',
  });
  expect(JSON.parse(mine[8].data!).error.code).toBe('StepFailed');
  for (const token of [other.token, undefined]) {
    const theirs = await read(token);
    expect(theirs.map((e) => e.id)).toEqual(mine.map((e) => e.id));
    expect(JSON.parse(theirs[7].data!)).not.toHaveProperty('error');
    expect(JSON.parse(theirs[8].data!)).not.toHaveProperty('error');
    expect(theirs.map((e) => e.data).join('')).not.toContain('secret detail');
  }
  const stateOnly = await readSse(`${t.url}/api/v1/circuit-runs/${uid}/events`, {
    token: owner.token,
    headers: { 'last-event-id': '0' },
  });
  expect(stateOnly.events.map((e) => e.id)).toEqual(['1', '2', '9']);
});

test('GraphQL circuitRunEvents (over /graphql/stream) and CircuitRun.events give the same events, error for the owner only', async () => {
  const uid = await runWithStepEvents(3);
  const subscription =
    'subscription($uid: ID!) { circuitRunEvents(uid: $uid, after: 0, kinds: [STATE, STEP]) { seq kind data run { state error { code } } } }';
  const subscribe = async (token?: string) => {
    const { events } = await readSse(`${t.url}/graphql/stream`, {
      method: 'POST',
      token,
      body: { query: subscription, variables: { uid } },
    });
    return events.filter((e) => e.event === 'next').map((e) => JSON.parse(e.data!).data.circuitRunEvents);
  };
  const mine = await subscribe(owner.token);
  expect(mine.map((e: { seq: number }) => e.seq)).toEqual([1, 2, 3, 5, 6, 8, 9]);
  expect(mine[5].data.error).toBe('JSONata: secret detail');
  expect(mine[6].run).toEqual({ state: 'EXCEPTION', error: { code: 'StepFailed' } });
  const theirs = await subscribe(other.token);
  expect(theirs[5].data).not.toHaveProperty('error');
  expect(theirs[6].run).toEqual({ state: 'EXCEPTION', error: null });

  const page = await t.gql(
    'query($u: ID!) { circuitRun(uid: $u) { events(after: 2, limit: 3) { seq kind data } } }',
    { u: uid },
    other.token,
  );
  expect((page.data as { circuitRun: { events: { seq: number }[] } }).circuitRun.events.map((e) => e.seq)).toEqual([
    3, 4, 5,
  ]);
});
