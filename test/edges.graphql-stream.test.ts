import { createClient } from 'graphql-sse';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, submitRun } from './support/run-factories';
import { MAX_STREAMS_PER_ANONYMOUS_CLIENT, MAX_STREAMS_PER_USER } from '../src/http/graphql-stream';

// graphql-sse at /graphql/stream: the same auth answers as REST, and single-connection reservations
// that are bounded per client and expire.
let t: TestApp;
let owner: TestUser;
// Long enough for a burst of PUTs on a loaded machine, short enough to wait out once.
const TTL_MS = 4000;
beforeAll(async () => {
  t = await startTestApp({ streamReservationTtlMs: TTL_MS });
  owner = await makeUser();
});
afterAll(async () => {
  await t.close();
});

const STREAM = () => `${t.url}/graphql/stream`;
const SUBSCRIPTION = 'subscription($uid: ID!) { circuitRunUpdated(uid: $uid) { uid state } }';

async function reserve(token?: string, headers: Record<string, string> = {}) {
  const res = await fetch(STREAM(), {
    method: 'PUT',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', text, json: () => JSON.parse(text) };
}

test('an invalid bearer token is 401 JSON before any stream opens, in both connection modes', async () => {
  const distinct = await fetch(STREAM(), {
    method: 'POST',
    headers: { authorization: 'Bearer cst_nope', accept: 'text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ query: SUBSCRIPTION, variables: { uid: 'x' } }),
  });
  expect(distinct.status).toBe(401);
  expect(distinct.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await distinct.json()).toEqual({
    errors: [{ message: 'The bearer token is invalid or revoked', extensions: { code: 'Unauthorized' } }],
  });

  const put = await reserve('cst_nope');
  expect(put.status).toBe(401);
  expect(put.json().errors[0].extensions.code).toBe('Unauthorized');
});

test("graphql-sse's own refusals keep the protocol's status and carry a message and a code like every other error", async () => {
  const answer = async (method: string, headers: Record<string, string> = {}) => {
    const res = await fetch(STREAM(), { method, headers: { authorization: `Bearer ${owner.token}`, ...headers } });
    return {
      status: res.status,
      allow: res.headers.get('allow'),
      type: res.headers.get('content-type'),
      body: (await res.json()) as { errors: { message: string; extensions: { code: string } }[] },
    };
  };
  const expectRefusal = (res: Awaited<ReturnType<typeof answer>>, status: number, code: string, message: RegExp) => {
    expect({ status: res.status, type: res.type, code: res.body.errors[0].extensions.code }).toEqual({
      status,
      type: 'application/json; charset=utf-8',
      code,
    });
    expect(res.body.errors[0].message).toMatch(message);
  };
  // No stream token and no event-stream Accept: the library answers 404 with no body.
  expectRefusal(await answer('GET'), 404, 'NotFound', /Accept: text\/event-stream/);
  const token = 'not-reserved';
  const other = await answer('PATCH', { 'x-graphql-event-stream-token': token });
  expectRefusal(other, 405, 'BadClientData', /GET or POST an operation/);
  expect(other.allow).toBe('GET, POST, PUT, DELETE');
  expectRefusal(await answer('PUT', { accept: 'application/json' }), 406, 'BadClientData', /Not acceptable/);
  expectRefusal(
    await answer('DELETE', { 'x-graphql-event-stream-token': token }),
    404,
    'NotFound',
    /^Stream not found$/,
  );
});

test('a reservation gets a server-chosen token (a client cannot name its own stream)', async () => {
  const res = await reserve(owner.token, { 'x-graphql-event-stream-token': 'chosen-by-client' });
  expect(res.status).toBe(201);
  expect(res.text).toMatch(/^[0-9a-f-]{36}$/);
});

test('anonymous reservations are allowed (public runs are readable anonymously) but bounded per client address', async () => {
  const answers = [];
  for (let i = 0; i < 10; i++) answers.push(await reserve());
  expect(answers.filter((a) => a.status === 201)).toHaveLength(MAX_STREAMS_PER_ANONYMOUS_CLIENT);
  const refused = answers.find((a) => a.status !== 201)!;
  expect(refused.status).toBe(429);
  expect(refused.json().errors[0]).toEqual({
    message: expect.stringMatching(/^Too many open or reserved streams/),
    extensions: { code: 'RateLimited' },
  });
});

test('a user with a token may hold more streams, still bounded', async () => {
  const user = await makeUser();
  const answers = [];
  for (let i = 0; i < MAX_STREAMS_PER_USER + 3; i++) answers.push((await reserve(user.token)).status);
  expect(answers).toEqual([...Array(MAX_STREAMS_PER_USER).fill(201), 429, 429, 429]);
});

test('a reservation nobody connects to expires, and its slot is free again', async () => {
  const user = await makeUser();
  const first = await reserve(user.token);
  expect(first.status).toBe(201);
  await new Promise((resolve) => setTimeout(resolve, TTL_MS + 300));
  // The expired stream is gone: an operation for it is 404 "Stream not found".
  const op = await fetch(STREAM(), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${user.token}`,
      'x-graphql-event-stream-token': first.text,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ query: '{ __typename }', extensions: { operationId: '1' } }),
  });
  expect(op.status).toBe(404);
  const again = [];
  for (let i = 0; i < MAX_STREAMS_PER_USER; i++) again.push((await reserve(user.token)).status);
  expect(again.every((s) => s === 201)).toBe(true);
});

test('a subscription sent to /graphql is a clear BadClientData pointing at /graphql/stream, not Internal', async () => {
  const res = await t.gql(SUBSCRIPTION, { uid: 'x' }, owner.token);
  expect(res.code).toBe('BadClientData');
  expect(res.errors?.[0].message).toBe('Subscriptions are served over graphql-sse at /graphql/stream, not at /graphql');
});

describe('the official graphql-sse client', () => {
  async function runStates(client: ReturnType<typeof createClient>, uid: string): Promise<string[]> {
    const states: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no COMPLETED for ${uid}; saw ${states.join(',')}`)), 10_000);
      client.subscribe<{ circuitRunUpdated: { state: string } }>(
        { query: SUBSCRIPTION, variables: { uid } },
        {
          next: ({ data }) => {
            if (data) states.push(data.circuitRunUpdated.state);
          },
          error: (error) => {
            clearTimeout(timer);
            reject(error instanceof Error ? error : new Error(JSON.stringify(error)));
          },
          complete: () => {
            clearTimeout(timer);
            resolve();
          },
        },
      );
    });
    return states;
  }

  test.each([true, false])(
    'singleConnection=%s: a fast run always reaches COMPLETED (25 runs, subscribe racing the run)',
    async (singleConnection) => {
      const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
      const client = createClient({
        url: STREAM(),
        singleConnection,
        headers: { authorization: `Bearer ${owner.token}` },
        retryAttempts: 0,
      });
      try {
        for (let i = 0; i < 25; i++) {
          const { body } = await submitRun(t, owner.token, adaptorUid, { input: { name: `r${i}` } });
          const states = await runStates(client, body.payload.uid);
          expect(states.at(-1)).toBe('COMPLETED');
        }
      } finally {
        client.dispose();
      }
    },
  );
});
