import type { TestApp } from './support/app';
import { HELLO_DEFINITION, TestUser } from './support/factories';
import { makeRunnableCircuit, readSse, submitRun, waitForRun } from './support/run-factories';
import { workerOnDemand } from './support/worker-on-demand';

const setup = workerOnDemand();
const { startWorker, holdDefinition, releaseHeld } = setup;
let t: TestApp;
let owner: TestUser;
let other: TestUser;
beforeAll(() => ({ t, owner, other } = setup));

test('GET /circuit-runs/{uid}/events: PROVISIONED, RUNNING, COMPLETED for the README example, ids 1, 2, 3, each the GET payload, then the stream closes', async () => {
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const { body } = await submitRun(t, owner.token, adaptorUid, { input: { name: 'Ada' } });
  const uid = body.payload.uid;
  const stream = await readSse(`${t.url}/api/v1/circuit-runs/${uid}/events`, {
    token: owner.token,
    onOpen: () => void startWorker(),
  });
  expect(stream.status).toBe(200);
  expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
  expect(stream.events.map((e) => [e.event, JSON.parse(e.data!).state])).toEqual([
    ['state', 'PROVISIONED'],
    ['state', 'RUNNING'],
    ['state', 'COMPLETED'],
  ]);
  // ids are the log's seqs: 1, 2, then after the step events in between.
  const ids = stream.events.map((e) => Number(e.id));
  expect(ids.slice(0, 2)).toEqual([1, 2]);
  expect(ids[2]).toBeGreaterThan(2);
  const final = JSON.parse(stream.events[2].data!);
  expect(final.result_blob.output).toBe('HELLO ADA');
  const get = await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token });
  expect(final).toEqual(get.body.payload);
  expect(JSON.parse(stream.events[0].data!)).not.toHaveProperty('ended_at');
});

test('Last-Event-ID (a seq, or a state name as before): events already seen are not sent again; after the terminal state the answer is 204', async () => {
  await startWorker();
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const { body } = await submitRun(t, owner.token, adaptorUid, { input: { name: 'x' } });
  await waitForRun(t, body.payload.uid, owner.token);
  const url = `${t.url}/api/v1/circuit-runs/${body.payload.uid}/events`;
  const stateOf = (e: { data?: string }) => JSON.parse(e.data!).state;
  const replayed = await readSse(url, { token: owner.token, headers: { 'last-event-id': '0' } });
  expect(replayed.events.map(stateOf)).toEqual(['PROVISIONED', 'RUNNING', 'COMPLETED']);
  const last = replayed.events[2].id!;
  const plain = await readSse(url, { token: owner.token });
  expect(plain.events.map((e) => [e.id, stateOf(e)])).toEqual([[last, 'COMPLETED']]);
  const resumed = await readSse(url, { token: owner.token, headers: { 'last-event-id': 'RUNNING' } });
  expect(resumed.events.map((e) => [e.id, stateOf(e)])).toEqual([[last, 'COMPLETED']]);
  const afterOne = await readSse(url, { token: owner.token, headers: { 'last-event-id': '1' } });
  expect(afterOne.events.map((e) => [e.id, stateOf(e)])).toEqual([
    ['2', 'RUNNING'],
    [last, 'COMPLETED'],
  ]);
  for (const seen of ['COMPLETED', last]) {
    const done = await readSse(url, { token: owner.token, headers: { 'last-event-id': seen } });
    expect(done.status).toBe(204);
  }
});

test('a RUNNING run streams RUNNING, then its terminal state when it ends', async () => {
  await startWorker();
  const { adaptorUid } = await makeRunnableCircuit(owner, holdDefinition());
  const { body } = await submitRun(t, owner.token, adaptorUid, { input: {} });
  const deadline = Date.now() + 10_000;
  while (
    (await t.rest('GET', `/circuit-runs/${body.payload.uid}`, { token: owner.token })).body.payload.state !==
      'RUNNING' &&
    Date.now() < deadline
  );
  let opened!: () => void;
  const open = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const stream = readSse(`${t.url}/api/v1/circuit-runs/${body.payload.uid}/events`, {
    token: owner.token,
    headers: { 'last-event-id': 'PROVISIONED' },
    onOpen: opened,
  });
  await open;
  await releaseHeld();
  expect((await stream).events.map((e) => JSON.parse(e.data!).state)).toEqual(['RUNNING', 'COMPLETED']);
});

test('without Last-Event-ID the first event is the state the run had when the stream opened, even if it ends right then', async () => {
  await startWorker();
  const { adaptorUid } = await makeRunnableCircuit(owner, holdDefinition());
  for (let i = 0; i < 5; i++) {
    const { body } = await submitRun(t, owner.token, adaptorUid, { input: {} });
    const deadline = Date.now() + 10_000;
    while (
      (await t.rest('GET', `/circuit-runs/${body.payload.uid}`, { token: owner.token })).body.payload.state !==
        'RUNNING' &&
      Date.now() < deadline
    );
    let opened!: () => void;
    const open = new Promise<void>((resolve) => {
      opened = resolve;
    });
    const stream = readSse(`${t.url}/api/v1/circuit-runs/${body.payload.uid}/events`, {
      token: owner.token,
      onOpen: opened,
    });
    await open;
    await releaseHeld();
    expect((await stream).events.map((e) => JSON.parse(e.data!).state)).toEqual(['RUNNING', 'COMPLETED']);
  }
});

test('same auth as the GET: 401, 403 and 404 as JSON envelopes before any streaming', async () => {
  await startWorker();
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const { body } = await submitRun(t, owner.token, adaptorUid, { input: { name: 'p' } });
  const url = (uid: string) => `${t.url}/api/v1/circuit-runs/${uid}/events`;
  const anonymous = await readSse(url(body.payload.uid));
  expect([anonymous.status, anonymous.body]).toEqual([
    401,
    { error: { code: 'Unauthorized', message: expect.any(String) } },
  ]);
  const stranger = await readSse(url(body.payload.uid), { token: other.token });
  expect([stranger.status, stranger.body.error.code]).toEqual([403, 'NotAllowed']);
  const invalid = await readSse(url(body.payload.uid), { token: 'cst_wrong' });
  expect(invalid.status).toBe(401);
  for (const uid of ['00000000-0000-4000-8000-000000000000', 'not-a-uid']) {
    const missing = await readSse(url(uid), { token: owner.token });
    expect([missing.status, missing.body.error.code]).toEqual([404, 'NotFound']);
  }
  const pub = await submitRun(t, owner.token, adaptorUid, { input: { name: 'p' }, is_public: true });
  await waitForRun(t, pub.body.payload.uid, owner.token);
  expect((await readSse(url(pub.body.payload.uid))).events.map((e) => JSON.parse(e.data!).state)).toEqual([
    'COMPLETED',
  ]);
});

describe('subscription circuitRunUpdated over /graphql/stream', () => {
  const SUBSCRIPTION = 'subscription($uid: ID!) { circuitRunUpdated(uid: $uid) { uid state resultBlob endedAt } }';
  const subscribe = (uid: string, token?: string) =>
    readSse(`${t.url}/graphql/stream`, { method: 'POST', token, body: { query: SUBSCRIPTION, variables: { uid } } });

  test('yields the run now and on every state change, then completes', async () => {
    await startWorker();
    const { adaptorUid } = await makeRunnableCircuit(owner, holdDefinition());
    const { body } = await submitRun(t, owner.token, adaptorUid, { input: {} });
    const stream = subscribe(body.payload.uid, owner.token);
    await releaseHeld();
    const { events } = await stream;
    const states = events
      .filter((e) => e.event === 'next')
      .map((e) => JSON.parse(e.data!).data.circuitRunUpdated.state);
    expect(states.at(-1)).toBe('COMPLETED');
    expect(states).toEqual([...new Set(states)]);
    expect(states.slice(0, -1).every((s) => ['PROVISIONED', 'RUNNING'].includes(s))).toBe(true);
    const last = JSON.parse(events.filter((e) => e.event === 'next').at(-1)!.data!).data.circuitRunUpdated;
    expect(last.resultBlob.output).toEqual({ done: true });
    expect(events.at(-1)!.event).toBe('complete');
  });

  test('read rules are checked when the subscription starts', async () => {
    await startWorker();
    const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const { body } = await submitRun(t, owner.token, adaptorUid, { input: { name: 'p' } });
    const codeOf = async (uid: string, token?: string) => {
      const { events } = await subscribe(uid, token);
      return JSON.parse(events.find((e) => e.event === 'next')!.data!).errors[0].extensions.code;
    };
    expect(await codeOf(body.payload.uid)).toBe('Unauthorized');
    expect(await codeOf(body.payload.uid, other.token)).toBe('NotAllowed');
    // An invalid token is refused before any stream opens: 401 JSON, as REST answers it.
    const invalid = await subscribe(body.payload.uid, 'cst_bad');
    expect(invalid).toMatchObject({ status: 401, body: { errors: [{ extensions: { code: 'Unauthorized' } }] } });
    expect(await codeOf('nope', owner.token)).toBe('NotFound');
  });
});
