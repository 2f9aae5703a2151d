import { createClient } from 'graphql-sse';
import { EventSource } from 'eventsource';
import { startTestApp, TestApp } from './support/app';
import { makeUser, HELLO_DEFINITION, TestUser } from './support/factories';
import { makeRunnableCircuit, readSse, submitRun, waitForRun } from './support/run-factories';

jest.setTimeout(120_000);

/**
 * Real third-party clients against fast runs: the official graphql-sse client in
 * single-connection mode, and the WHATWG `eventsource` package on the REST stream. Each subscribes
 * right after submitting, racing the run's end, many times over; every one must see COMPLETED.
 */
let t: TestApp;
let owner: TestUser;
let adaptorUid: string;
const REPEAT = 40;
// Each EventSource run ends with the client's reconnect after the server's `retry` (1 s) and its 204: fewer of
// them, side by side.
const RECONNECTS = 10;

beforeAll(async () => {
  t = await startTestApp();
  owner = await makeUser({ credits: 10_000 });
  ({ adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION));
});
afterAll(async () => {
  await t.close();
});

const submit = async (name: string) =>
  (await submitRun(t, owner.token, adaptorUid, { input: { name } })).body.payload.uid as string;

function statesOverGraphqlSse(client: ReturnType<typeof createClient>, uid: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const states: string[] = [];
    const timer = setTimeout(
      () => reject(new Error(`no COMPLETED for ${uid} after 20 s; saw ${states.join(',')}`)),
      20_000,
    );
    client.subscribe<{ circuitRunUpdated: { state: string } }>(
      { query: 'subscription($uid: ID!) { circuitRunUpdated(uid: $uid) { state } }', variables: { uid } },
      {
        next: (result) => {
          if (result.data) states.push(result.data.circuitRunUpdated.state);
          else reject(new Error(JSON.stringify(result.errors)));
        },
        error: (error) => {
          clearTimeout(timer);
          reject(error instanceof Error ? error : new Error(JSON.stringify(error)));
        },
        complete: () => {
          clearTimeout(timer);
          resolve(states);
        },
      },
    );
  });
}

test(`graphql-sse's official client (singleConnection: true) sees every fast run reach COMPLETED, ${REPEAT} times one after another and ${REPEAT} at once`, async () => {
  const client = createClient({
    url: `${t.url}/graphql/stream`,
    singleConnection: true,
    headers: { authorization: `Bearer ${owner.token}` },
    retryAttempts: 0,
  });
  try {
    for (let i = 0; i < REPEAT; i++) {
      const states = await statesOverGraphqlSse(client, await submit(`s${i}`));
      expect(states.at(-1)).toBe('COMPLETED');
      expect(states).toEqual([...new Set(states)]);
    }
    const uids = await Promise.all(Array.from({ length: REPEAT }, (_, i) => submit(`c${i}`)));
    const all = await Promise.all(uids.map((uid) => statesOverGraphqlSse(client, uid)));
    expect(all.map((states) => states.at(-1))).toEqual(uids.map(() => 'COMPLETED'));
  } finally {
    client.dispose();
  }
});

/** Opens the REST stream with the `eventsource` package; resolves with the events once the client stops for good. */
function eventsOverEventSource(uid: string, kinds?: string): Promise<{ id: string; type: string; state?: string }[]> {
  return new Promise((resolve, reject) => {
    const events: { id: string; type: string; state?: string }[] = [];
    const url = `${t.url}/api/v1/circuit-runs/${uid}/events${kinds ? `?events=${kinds}` : ''}`;
    const source = new EventSource(url, {
      fetch: (input, init) =>
        fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${owner.token}` } }),
    });
    const timer = setTimeout(() => {
      source.close();
      reject(new Error(`stream of ${uid} did not end; saw ${JSON.stringify(events)}`));
    }, 20_000);
    for (const type of ['state', 'step', 'output']) {
      source.addEventListener(type, (event) => {
        events.push({
          id: event.lastEventId,
          type,
          state: type === 'state' ? (JSON.parse(event.data) as { state: string }).state : undefined,
        });
      });
    }
    // After the terminal state the server closes; the client reconnects with Last-Event-ID and gets 204, which stops it.
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        clearTimeout(timer);
        resolve(events);
      }
    };
  });
}

test(`the eventsource package on GET /circuit-runs/{uid}/events sees each fast run to COMPLETED exactly once, then stops on 204 (${RECONNECTS} runs at once)`, async () => {
  // Each client subscribes right after its own submit; the clients wait out their reconnect delay together.
  const streams = await Promise.all(
    Array.from({ length: RECONNECTS }, async (_, i) => eventsOverEventSource(await submit(`e${i}`))),
  );
  for (const events of streams) {
    expect(events.at(-1)!.state).toBe('COMPLETED');
    expect(events.map((e) => e.id)).toEqual([...new Set(events.map((e) => e.id))]);
    expect(events.map((e) => Number(e.id))).toEqual([...events.map((e) => Number(e.id))].sort((a, b) => a - b));
  }
});

test('replay after Last-Event-ID n gives exactly the events after n, REST and GraphQL (CircuitRun.events) alike', async () => {
  const uid = await submit('replay');
  await waitForRun(t, uid, owner.token);
  const all = await t.gql(
    'query($u: ID!) { circuitRun(uid: $u) { events { seq kind run { state } } } }',
    { u: uid },
    owner.token,
  );
  const seqs = (all.data as { circuitRun: { events: { seq: number }[] } }).circuitRun.events.map((e) => e.seq);
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  for (let n = 0; n <= seqs.length; n++) {
    const rest = await readSse(`${t.url}/api/v1/circuit-runs/${uid}/events?events=state,step,output`, {
      token: owner.token,
      headers: { 'last-event-id': String(n) },
    });
    if (n === seqs.length) {
      expect(rest.status).toBe(204);
      continue;
    }
    expect(rest.events.map((e) => Number(e.id))).toEqual(seqs.slice(n));
    const gql = await t.gql(
      'query($u: ID!, $n: Int) { circuitRun(uid: $u) { events(after: $n) { seq } } }',
      { u: uid, n },
      owner.token,
    );
    expect((gql.data as { circuitRun: { events: { seq: number }[] } }).circuitRun.events.map((e) => e.seq)).toEqual(
      seqs.slice(n),
    );
  }
  const bad = await readSse(`${t.url}/api/v1/circuit-runs/${uid}/events?events=state,nope`, { token: owner.token });
  expect([bad.status, bad.body.error.code]).toEqual([400, 'BadClientData']);
});
