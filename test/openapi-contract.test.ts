import crypto from 'node:crypto';
import { startTestApp, TestApp } from './support/app';
import { makeCircuit, makeUser, TestUser } from './support/factories';
import { makeBlob, tempDataDir } from './support/blob-factories';
import { makeRunnableCircuit, startHttpTarget } from './support/run-factories';
import { ContractChecker, validateOpenApiDocument } from './support/openapi';
import { makeWaitingRun } from './support/approval-factories';
import { CircuitAdaptor } from '../src/models';

/**
 * Replays the whole REST surface — every documented operation, its success and its errors — and
 * checks every answer (status, headers, body) against GET /api/v1/openapi.json. A new route needs a
 * success case here: the last test lists the operations that have none.
 */

const data = tempDataDir();
let t: TestApp;
let doc: any;
let checker: ContractChecker;
let owner: TestUser;
let other: TestUser;
let admin: TestUser;
let broke: TestUser;
let searcher: TestUser;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const held: Array<() => void> = [];

const SEARCH_LIMIT = 30;
const NO_SUCH_UID = '00000000-0000-4000-8000-000000000000';
const BAD_TOKEN = 'cst_not-a-real-token';

beforeAll(async () => {
  t = await startTestApp({ dataDir: data.dir, searchRateLimitPerMinute: SEARCH_LIMIT });
  const res = await fetch(`${t.url}/api/v1/openapi.json`);
  doc = await res.json();
  checker = new ContractChecker(doc);
  [owner, other, admin, broke, searcher] = await Promise.all([
    makeUser(),
    makeUser(),
    makeUser({ isAdmin: true }),
    makeUser({ credits: 0 }),
    makeUser(),
  ]);
  target = await startHttpTarget((req, response) => {
    if (req.url?.startsWith('/fail')) {
      response.writeHead(503).end();
      return;
    }
    held.push(() => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  });
});
afterAll(async () => {
  for (const release of held) release();
  await target?.close();
  await t?.close();
  data.remove();
});

interface CallOptions {
  token?: string;
  body?: unknown;
  rawBody?: string;
  contentType?: string;
  query?: Record<string, string | number>;
  headers?: Record<string, string>;
}

/** One request to a documented path template; its answer is checked against the document. */
async function call(method: string, template: string, values: Record<string, string> = {}, options: CallOptions = {}) {
  const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => {
    if (!(name in values)) throw new Error(`no value for {${name}} in ${template}`);
    return encodeURIComponent(values[name]);
  });
  const query = options.query
    ? `?${new URLSearchParams(Object.entries(options.query).map(([k, v]) => [k, String(v)]))}`
    : '';
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) {
    body = options.rawBody;
    if (options.contentType) headers['content-type'] = options.contentType;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = options.contentType ?? 'application/json';
  }
  const res = await fetch(`${t.url}/api/v1${path}${query}`, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  checker.check({ method, template, status: res.status, headers: res.headers, text });
  let parsed: any;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed, headers: res.headers, text };
}

async function expectStatus(promise: ReturnType<typeof call>, status: number) {
  const res = await promise;
  expect({ status: res.status, body: res.status === status ? undefined : res.body }).toEqual({
    status,
    body: undefined,
  });
  return res;
}

async function waitForState(uid: string, token: string, states: string[]) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await call('GET', '/circuit-runs/{uid}', { uid }, { token });
    if (states.includes(res.body?.payload?.state)) return res.body.payload;
    if (Date.now() > deadline) throw new Error(`run ${uid}: ${JSON.stringify(res.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}

const unique = () => crypto.randomBytes(4).toString('hex');

test('the document is a valid OpenAPI 3.1 document', async () => {
  const result = await validateOpenApiDocument(doc);
  expect(result.errors).toBeUndefined();
  expect(result).toMatchObject({ valid: true, version: '3.1' });
});

describe('circuits', () => {
  test('create, read, list, update, deprecate, star, ping, embeds, explain', async () => {
    const name = `c${unique()}`;
    const created = await expectStatus(
      call('POST', '/circuits', {}, { token: owner.token, body: { name, description: 'd', license_type: 'MIT' } }),
      200,
    );
    const circuit = created.body.payload;
    await expectStatus(call('POST', '/circuits', {}, { token: owner.token, body: { name } }), 409);
    await expectStatus(call('POST', '/circuits', {}, { body: { name: 'x' } }), 401);
    await expectStatus(
      call('POST', '/circuits', {}, { token: owner.token, body: { name: 'x', is_private: 'yes' } }),
      400,
    );
    await expectStatus(
      call(
        'POST',
        '/circuits',
        {},
        { token: owner.token, rawBody: 'name=x', contentType: 'application/x-www-form-urlencoded' },
      ),
      415,
    );
    await expectStatus(
      call(
        'POST',
        '/circuits',
        {},
        {
          token: owner.token,
          rawBody: JSON.stringify({ name: 'x', description: 'x'.repeat(1_100_000) }),
          contentType: 'application/json',
        },
      ),
      413,
    );
    await expectStatus(
      call('POST', '/circuits', {}, { token: owner.token, rawBody: '{"name":', contentType: 'application/json' }),
      400,
    );

    const { circuit: priv } = await makeCircuit(owner, { isPrivate: true });
    const values = { circuit_uid: circuit.uid, username: owner.username, circuit_name: name };
    await expectStatus(call('GET', '/circuits/{circuit_uid}', values), 200);
    await expectStatus(call('GET', '/circuits/{circuit_uid}', { circuit_uid: priv.uid }), 401);
    await expectStatus(call('GET', '/circuits/{circuit_uid}', { circuit_uid: priv.uid }, { token: other.token }), 403);
    await expectStatus(call('GET', '/circuits/{circuit_uid}', { circuit_uid: NO_SUCH_UID }), 404);
    await expectStatus(call('GET', '/circuits/{circuit_uid}', { circuit_uid: 'nope' }), 404);
    await expectStatus(call('GET', '/circuits/{circuit_uid}', values, { token: BAD_TOKEN }), 401);

    await expectStatus(call('GET', '/users/{username}/circuits/{circuit_name}', values), 200);
    await expectStatus(
      call('GET', '/users/{username}/circuits/{circuit_name}', { ...values, circuit_name: 'none' }),
      404,
    );

    await expectStatus(call('GET', '/circuits/{circuit_uid}/primary', values), 404);
    const { circuit: runnable } = await makeCircuit(owner);
    await expectStatus(call('GET', '/circuits/{circuit_uid}/primary', { circuit_uid: runnable.uid }), 200);
    // The circuit's TypeScript module.
    await expectStatus(call('GET', '/circuits/{circuit_uid}/client.ts', { circuit_uid: runnable.uid }), 200);
    await expectStatus(
      call('GET', '/circuits/{circuit_uid}/client.ts', { circuit_uid: runnable.uid }, { query: { alias: 'none' } }),
      404,
    );
    await expectStatus(call('GET', '/circuits/{circuit_uid}/client.ts', values), 404);
    await expectStatus(call('GET', '/circuits/{circuit_uid}/client.ts', { circuit_uid: priv.uid }), 401);
    await expectStatus(
      call(
        'GET',
        '/circuits/{circuit_uid}/client.ts',
        { circuit_uid: runnable.uid },
        { query: { version: NO_SUCH_UID, alias: 'x' } },
      ),
      400,
    );

    await expectStatus(
      call('GET', '/users/{username}/circuits', values, { token: owner.token, query: { limit: 2 } }),
      200,
    );
    await expectStatus(call('GET', '/users/{username}/circuits', values, { query: { limit: 0 } }), 400);
    await expectStatus(call('GET', '/circuits/{circuit_uid}/circuit-versions', { circuit_uid: runnable.uid }), 200);
    await expectStatus(
      call('GET', '/circuits/{circuit_uid}/circuit-versions', { circuit_uid: runnable.uid }, { query: { page: 'x' } }),
      400,
    );

    await expectStatus(
      call('PUT', '/users/{username}/circuits/{circuit_name}', values, {
        token: owner.token,
        body: { description: 'new' },
      }),
      200,
    );
    await expectStatus(
      call('PUT', '/users/{username}/circuits/{circuit_name}', values, {
        token: other.token,
        body: { description: 'no' },
      }),
      403,
    );
    await expectStatus(
      call('PUT', '/users/{username}/circuits/{circuit_name}', values, { body: { description: 'no' } }),
      401,
    );
    await expectStatus(
      call('PUT', '/users/{username}/circuits/{circuit_name}', values, {
        token: owner.token,
        body: { name: 'renamed' },
      }),
      400,
    );

    for (const method of ['POST', 'GET', 'DELETE']) {
      await expectStatus(
        call(method, '/users/{username}/circuits/{circuit_name}/stars', values, { token: other.token }),
        200,
      );
      await expectStatus(call(method, '/users/{username}/circuits/{circuit_name}/stars', values), 401);
      await expectStatus(
        call(
          method,
          '/users/{username}/circuits/{circuit_name}/stars',
          { ...values, circuit_name: 'none' },
          { token: other.token },
        ),
        404,
      );
      await expectStatus(
        call(
          method,
          '/users/{username}/circuits/{circuit_name}/stars',
          { ...values, username: owner.username, circuit_name: priv.name },
          { token: other.token },
        ),
        403,
      );
    }
    await expectStatus(
      call('POST', '/users/{username}/circuits/{circuit_name}/stars', values, { token: other.token, body: { x: 1 } }),
      400,
    );
    await expectStatus(call('GET', '/users/stars', {}, { token: other.token }), 200);
    await expectStatus(call('GET', '/users/stars', {}), 401);
    await expectStatus(call('GET', '/users/stars', {}, { token: other.token, query: { limit: -1 } }), 400);

    await expectStatus(call('GET', '/users/{username}/circuits/{circuit_name}/ping', values), 200);
    await expectStatus(
      call('GET', '/users/{username}/circuits/{circuit_name}/ping', values, { token: BAD_TOKEN }),
      401,
    );
    await expectStatus(call('GET', '/users/{username}/circuits/{circuit_name}/embeds', values), 200);
    await expectStatus(
      call('GET', '/users/{username}/circuits/{circuit_name}/embeds', { ...values, circuit_name: 'none' }),
      404,
    );
    await expectStatus(
      call('GET', '/users/{username}/circuits/{circuit_name}/embeds', values, { query: { limit: 'many' } }),
      400,
    );
    const runnableValues = { username: owner.username, circuit_name: runnable.name };
    await expectStatus(call('GET', '/users/{username}/circuits/{circuit_name}/explain', runnableValues), 200);
    await expectStatus(
      call('GET', '/users/{username}/circuits/{circuit_name}/explain', { ...values, circuit_name: priv.name }),
      401,
    );
    await expectStatus(
      call('GET', '/users/{username}/circuits/{circuit_name}/explain', { ...values, circuit_name: 'none' }),
      404,
    );

    const deprecated = await expectStatus(
      call('PUT', '/circuits/{circuit_uid}/deprecate', { circuit_uid: runnable.uid }, { token: owner.token }),
      200,
    );
    expect(deprecated.headers.get('deprecation')).toMatch(/^@\d+$/);
    await expectStatus(
      call('PUT', '/circuits/{circuit_uid}/deprecate', { circuit_uid: runnable.uid }, { token: other.token }),
      403,
    );
    await expectStatus(call('PUT', '/circuits/{circuit_uid}/deprecate', { circuit_uid: runnable.uid }), 401);
    await expectStatus(
      call(
        'PUT',
        '/circuits/{circuit_uid}/deprecate',
        { circuit_uid: runnable.uid },
        { token: owner.token, body: { why: 1 } },
      ),
      400,
    );
    await expectStatus(call('GET', '/circuits/{circuit_uid}', { circuit_uid: runnable.uid }), 200);
  });
});

describe('the version lifecycle and aliases', () => {
  test('publish, promote, me; put, list, read, history, delete an alias; a query through it', async () => {
    const { circuit: priv } = await makeCircuit(owner, { isPrivate: true });
    const { circuit } = await makeCircuit(owner);
    const adaptor = await CircuitAdaptor.findOne({ where: { circuit_uid: circuit.uid } });
    const values = { circuit_uid: circuit.uid };
    const definition = {
      query_schema: { type: 'object', properties: { name: { type: 'string' } } },
      steps: [{ id: 'greet', kind: 'template', template: 'Hello {{input.name}}' }],
    };
    const v2 = await expectStatus(
      call('POST', '/circuits/{circuit_uid}/versions', values, {
        token: owner.token,
        body: { ...definition, primary: false },
      }),
      200,
    );
    await expectStatus(
      call('POST', '/circuits/{circuit_uid}/versions', values, {
        token: owner.token,
        body: { ...definition, steps: [] },
      }),
      400,
    );
    await expectStatus(
      call('POST', '/circuits/{circuit_uid}/versions', values, { token: other.token, body: definition }),
      403,
    );
    await expectStatus(call('POST', '/circuits/{circuit_uid}/versions', values, { body: definition }), 401);
    await expectStatus(
      call(
        'POST',
        '/circuits/{circuit_uid}/versions',
        { circuit_uid: NO_SUCH_UID },
        { token: owner.token, body: definition },
      ),
      404,
    );
    const versionUid = v2.body.payload.uid as string;
    await expectStatus(
      call('PUT', '/circuits/{circuit_uid}/primary', values, { token: owner.token, body: { version_uid: versionUid } }),
      200,
    );
    await expectStatus(
      call('PUT', '/circuits/{circuit_uid}/primary', values, {
        token: owner.token,
        body: { version_uid: NO_SUCH_UID },
      }),
      404,
    );
    await expectStatus(call('PUT', '/circuits/{circuit_uid}/primary', values, { token: owner.token, body: {} }), 400);
    await expectStatus(
      call('PUT', '/circuits/{circuit_uid}/primary', values, { token: other.token, body: { version_uid: versionUid } }),
      403,
    );
    await expectStatus(
      call('PUT', '/circuits/{circuit_uid}/primary', values, { body: { version_uid: versionUid } }),
      401,
    );
    await expectStatus(call('GET', '/users/me', {}, { token: owner.token }), 200);
    await expectStatus(call('GET', '/users/me', {}), 401);
    await expectStatus(call('GET', '/users/me', {}, { token: BAD_TOKEN }), 401);

    const alias = { ...values, name: 'prod' };
    const routes = [{ version_uid: versionUid, weight: 100 }];
    await expectStatus(
      call('PUT', '/circuits/{circuit_uid}/aliases/{name}', alias, { token: owner.token, body: { routes } }),
      200,
    );
    await expectStatus(
      call('PUT', '/circuits/{circuit_uid}/aliases/{name}', alias, {
        token: owner.token,
        body: {
          routes: [
            { version_uid: versionUid, weight: 99 },
            { version_uid: circuit.primary_version_uid, weight: 1 },
          ],
        },
      }),
      200,
    );
    await expectStatus(
      call('PUT', '/circuits/{circuit_uid}/aliases/{name}', alias, { token: owner.token, body: { routes: [] } }),
      400,
    );
    await expectStatus(
      call(
        'PUT',
        '/circuits/{circuit_uid}/aliases/{name}',
        { ...alias, name: 'Bad' },
        { token: owner.token, body: { routes } },
      ),
      400,
    );
    await expectStatus(
      call('PUT', '/circuits/{circuit_uid}/aliases/{name}', alias, { token: other.token, body: { routes } }),
      403,
    );
    await expectStatus(call('PUT', '/circuits/{circuit_uid}/aliases/{name}', alias, { body: { routes } }), 401);
    await expectStatus(
      call('PUT', '/circuits/{circuit_uid}/aliases/{name}', alias, {
        token: owner.token,
        rawBody: 'routes=1',
        contentType: 'text/plain',
      }),
      415,
    );
    await expectStatus(
      call('PUT', '/circuits/{circuit_uid}/aliases/{name}', alias, { token: owner.token, body: { routes } }),
      200,
    );
    await expectStatus(call('GET', '/circuits/{circuit_uid}/aliases', values), 200);
    await expectStatus(call('GET', '/circuits/{circuit_uid}/aliases', values, { query: { limit: 0 } }), 400);
    await expectStatus(call('GET', '/circuits/{circuit_uid}/aliases', { circuit_uid: priv.uid }), 401);
    await expectStatus(
      call('GET', '/circuits/{circuit_uid}/aliases', { circuit_uid: priv.uid }, { token: other.token }),
      403,
    );
    await expectStatus(call('GET', '/circuits/{circuit_uid}/aliases', { circuit_uid: NO_SUCH_UID }), 404);
    await expectStatus(call('GET', '/circuits/{circuit_uid}/aliases/{name}', alias), 200);
    await expectStatus(call('GET', '/circuits/{circuit_uid}/aliases/{name}', { ...alias, name: 'none' }), 404);
    await expectStatus(
      call(
        'GET',
        '/circuits/{circuit_uid}/aliases/{name}',
        { circuit_uid: priv.uid, name: 'prod' },
        { token: other.token },
      ),
      403,
    );
    const history = await expectStatus(call('GET', '/circuits/{circuit_uid}/aliases/{name}/history', alias), 200);
    expect(history.body.meta.total_count).toBe(2);
    await expectStatus(
      call('GET', '/circuits/{circuit_uid}/aliases/{name}/history', alias, { query: { page: 0 } }),
      400,
    );
    await expectStatus(call('GET', '/circuits/{circuit_uid}/aliases/{name}/history', { ...alias, name: 'none' }), 404);

    const queried = await expectStatus(
      call(
        'POST',
        '/circuit-adaptors/{adaptor_uid}/query',
        { adaptor_uid: adaptor!.uid },
        {
          token: owner.token,
          body: { input: { name: 'x' }, context: { alias: 'prod' } },
          headers: { Prefer: 'wait=10' },
        },
      ),
      200,
    );
    expect(queried.body.payload).toMatchObject({ alias: 'prod', circuit_version_uid: versionUid });
    await expectStatus(
      call(
        'POST',
        '/circuit-adaptors/{adaptor_uid}/query',
        { adaptor_uid: adaptor!.uid },
        { token: owner.token, body: { input: {}, context: { alias: 'prod', version: versionUid } } },
      ),
      400,
    );
    await expectStatus(
      call(
        'POST',
        '/circuit-adaptors/{adaptor_uid}/query',
        { adaptor_uid: adaptor!.uid },
        { token: owner.token, body: { input: {}, context: { alias: 'none' } } },
      ),
      404,
    );

    await expectStatus(call('DELETE', '/circuits/{circuit_uid}/aliases/{name}', alias, { token: other.token }), 403);
    await expectStatus(call('DELETE', '/circuits/{circuit_uid}/aliases/{name}', alias), 401);
    await expectStatus(call('DELETE', '/circuits/{circuit_uid}/aliases/{name}', alias, { token: owner.token }), 200);
    await expectStatus(call('DELETE', '/circuits/{circuit_uid}/aliases/{name}', alias, { token: owner.token }), 404);
  });
});

describe('runs', () => {
  test('start, read in flight and finished, list, follow, idempotency, credits', async () => {
    const slow = await makeRunnableCircuit(owner, {
      query_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      steps: [{ id: 'fetch', kind: 'http', method: 'GET', url: `${target.url}/{{input.path}}` }],
      output: 'steps.fetch.output',
    });
    const values = { adaptor_uid: slow.adaptorUid };
    const query = (token: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
      call('POST', '/circuit-adaptors/{adaptor_uid}/query', values, { token, body, headers });

    const key = `k-${unique()}`;
    const started = await expectStatus(
      query(owner.token, { input: { path: 'hold' }, is_public: true }, { 'Idempotency-Key': key }),
      200,
    );
    const uid = started.body.payload.uid;
    await expectStatus(
      query(owner.token, { input: { path: 'hold' }, is_public: true }, { 'Idempotency-Key': key }),
      200,
    );
    await expectStatus(query(owner.token, { input: { path: 'other' } }, { 'Idempotency-Key': key }), 422);
    await expectStatus(query(owner.token, { input: {} }), 400);
    await expectStatus(query(owner.token, { input: { path: 'x' } }, { 'Idempotency-Key': ' bad key ' }), 400);
    await expectStatus(query(undefined, { input: { path: 'x' } }), 401);
    await expectStatus(query(other.token, { input: { path: 'x' }, is_public: true }), 403);
    await expectStatus(query(broke.token, { input: { path: 'x' } }), 402);
    await expectStatus(
      call(
        'POST',
        '/circuit-adaptors/{adaptor_uid}/query',
        { adaptor_uid: NO_SUCH_UID },
        { token: owner.token, body: { input: {} } },
      ),
      404,
    );
    await expectStatus(
      call('POST', '/circuit-adaptors/{adaptor_uid}/query', values, {
        token: owner.token,
        rawBody: 'input=1',
        contentType: 'text/plain',
      }),
      415,
    );

    // In flight: the fields that come at the end are absent, not null.
    const running = await waitForState(uid, owner.token, ['RUNNING']);
    expect(running).not.toHaveProperty('ended_at');
    // The query's priority (5: none sent) for the owner; absent for anyone else reading the public run.
    expect(running.priority).toBe(5);
    const anonymous = await expectStatus(call('GET', '/circuit-runs/{uid}', { uid }), 200);
    expect(anonymous.body.payload).not.toHaveProperty('priority');
    for (const release of held.splice(0)) release();
    const done = await waitForState(uid, owner.token, ['COMPLETED']);
    expect(done.result_blob).toBeDefined();

    const failed = await expectStatus(query(owner.token, { input: { path: 'fail' } }), 200);
    await waitForState(failed.body.payload.uid, owner.token, ['EXCEPTION']);
    await expectStatus(call('GET', '/circuit-runs/{uid}', { uid: failed.body.payload.uid }), 401);
    await expectStatus(
      call('GET', '/circuit-runs/{uid}', { uid: failed.body.payload.uid }, { token: other.token }),
      403,
    );
    await expectStatus(call('GET', '/circuit-runs/{uid}', { uid: failed.body.payload.uid }, { token: BAD_TOKEN }), 401);
    await expectStatus(call('GET', '/circuit-runs/{uid}', { uid: NO_SUCH_UID }), 404);

    // Cancel (owner only) and Prefer: wait answer the run as GET shows it.
    await expectStatus(
      call('POST', '/circuit-runs/{uid}/cancel', { uid: failed.body.payload.uid }, { token: owner.token }),
      200,
    );
    await expectStatus(
      call('POST', '/circuit-runs/{uid}/cancel', { uid: failed.body.payload.uid }, { token: other.token }),
      403,
    );
    await expectStatus(call('POST', '/circuit-runs/{uid}/cancel', { uid: failed.body.payload.uid }), 401);
    await expectStatus(call('POST', '/circuit-runs/{uid}/cancel', { uid: NO_SUCH_UID }, { token: owner.token }), 404);

    // Replay and compare.
    const replayed = await expectStatus(
      call('POST', '/circuit-runs/{uid}/replay', { uid }, { token: owner.token, body: { mode: 'live' } }),
      200,
    );
    expect(replayed.body.payload).toMatchObject({ state: 'PROVISIONED', replay_of: uid });
    await expectStatus(call('POST', '/circuit-runs/{uid}/replay', { uid }, { token: other.token, body: {} }), 403);
    await expectStatus(call('POST', '/circuit-runs/{uid}/replay', { uid }, { body: {} }), 401);
    await expectStatus(
      call('POST', '/circuit-runs/{uid}/replay', { uid: NO_SUCH_UID }, { token: owner.token, body: {} }),
      404,
    );
    await expectStatus(
      call('POST', '/circuit-runs/{uid}/replay', { uid }, { token: owner.token, body: { mode: 'sideways' } }),
      400,
    );
    await expectStatus(
      call('GET', '/circuit-runs/{a}/compare/{b}', { a: uid, b: failed.body.payload.uid }, { token: owner.token }),
      200,
    );
    await expectStatus(
      call('GET', '/circuit-runs/{a}/compare/{b}', { a: uid, b: failed.body.payload.uid }, { token: other.token }),
      403,
    );
    await expectStatus(call('GET', '/circuit-runs/{a}/compare/{b}', { a: uid, b: failed.body.payload.uid }), 401);
    await expectStatus(
      call('GET', '/circuit-runs/{a}/compare/{b}', { a: uid, b: NO_SUCH_UID }, { token: owner.token }),
      404,
    );

    // Approval steps: a run waiting on one, made as the engine leaves it.
    const waiting = await makeWaitingRun(owner, { prompt: 'Go ahead?' });
    const approval = { uid: waiting.run.uid, step_id: waiting.stepId };
    const decide = (options: CallOptions) => call('POST', '/circuit-runs/{uid}/approvals/{step_id}', approval, options);
    const shown = await expectStatus(
      call('GET', '/circuit-runs/{uid}', { uid: waiting.run.uid }, { token: owner.token }),
      200,
    );
    expect(shown.body.payload.waiting_for).toEqual([
      {
        step_id: waiting.stepId,
        kind: 'approval',
        prompt: 'Go ahead?',
        expires_at: expect.any(String),
        decision_url: expect.any(String),
      },
    ]);
    await expectStatus(
      call('GET', '/users/circuit-runs', {}, { token: owner.token, query: { state: 'RUNNING' } }),
      200,
    );
    await expectStatus(decide({ body: { approved: true } }), 401);
    await expectStatus(decide({ token: other.token, body: { approved: true } }), 403);
    await expectStatus(
      call(
        'POST',
        '/circuit-runs/{uid}/approvals/{step_id}',
        { ...approval, uid: NO_SUCH_UID },
        { token: owner.token, body: { approved: true } },
      ),
      404,
    );
    await expectStatus(decide({ token: owner.token, body: { approved: true, comment: 'x'.repeat(2001) } }), 400);
    await expectStatus(
      decide({ token: owner.token, body: { approved: true, data: { big: 'x'.repeat(70_000) } } }),
      400,
    );
    await expectStatus(
      decide({ token: owner.token, rawBody: 'approved=true', contentType: 'application/x-www-form-urlencoded' }),
      415,
    );
    await expectStatus(
      call(
        'POST',
        '/circuit-runs/{uid}/approvals/{step_id}',
        { ...approval, step_id: 'other' },
        { token: owner.token, body: { approved: true } },
      ),
      409,
    );
    const decided = await expectStatus(
      decide({ token: owner.token, body: { approved: true, comment: 'ok', data: { ticket: 1 } } }),
      200,
    );
    expect(decided.body.payload).not.toHaveProperty('waiting_for');
    await expectStatus(decide({ token: owner.token, body: { approved: true } }), 200);
    await expectStatus(decide({ token: owner.token, body: { approved: false } }), 409);

    // Signals: a run waiting on a wait step for a signal.
    const signalled = await makeRunnableCircuit(owner, {
      query_schema: { type: 'object' },
      steps: [{ id: 'reply', kind: 'wait', for: 'signal', schema: { type: 'object' } }],
    });
    const signalStart = await t.rest('POST', `/circuit-adaptors/${signalled.adaptorUid}/query`, {
      token: owner.token,
      body: { input: {} },
    });
    const signalRun = signalStart.body.payload.uid as string;
    for (let tries = 0; tries < 400; tries++) {
      const now = await t.rest('GET', `/circuit-runs/${signalRun}`, { token: owner.token });
      if (now.body.payload.waiting_for) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const signalAt = { uid: signalRun, step_id: 'reply' };
    const signal = (options: CallOptions, at = signalAt) =>
      call('POST', '/circuit-runs/{uid}/signals/{step_id}', at, options);
    await expectStatus(signal({ body: { data: {} } }), 401);
    await expectStatus(signal({ token: other.token, body: { data: {} } }), 403);
    await expectStatus(signal({ token: owner.token, body: { data: {} } }, { ...signalAt, uid: NO_SUCH_UID }), 404);
    await expectStatus(signal({ token: owner.token, body: { data: 'not an object' } }), 400);
    await expectStatus(signal({ token: owner.token, body: { data: {} } }, { ...signalAt, step_id: 'other' }), 409);
    await expectStatus(signal({ token: owner.token, body: { data: { ok: true } } }), 200);
    await expectStatus(signal({ token: owner.token, body: { data: { ok: false } } }), 409);

    const waited = await expectStatus(
      query(owner.token, { input: { path: 'fail' }, deadline_s: 30 }, { Prefer: 'wait=20' }),
      200,
    );
    expect(waited.body.payload.state).toBe('EXCEPTION');
    await expectStatus(query(owner.token, { input: { path: 'x' }, deadline_s: 0 }), 400);

    await expectStatus(
      call('GET', '/circuit-versions/{version_uid}/circuit-runs', { version_uid: slow.version.uid }),
      200,
    );
    await expectStatus(call('GET', '/circuit-versions/{version_uid}/circuit-runs', { version_uid: NO_SUCH_UID }), 404);
    await expectStatus(
      call(
        'GET',
        '/circuit-versions/{version_uid}/circuit-runs',
        { version_uid: slow.version.uid },
        { query: { limit: 'x' } },
      ),
      400,
    );
    await expectStatus(call('GET', '/circuits/{circuit_uid}/circuit-runs', { circuit_uid: slow.circuit.uid }), 200);
    await expectStatus(call('GET', '/circuits/{circuit_uid}/circuit-runs', { circuit_uid: NO_SUCH_UID }), 404);
    await expectStatus(
      call('GET', '/circuits/{circuit_uid}/circuit-runs', { circuit_uid: slow.circuit.uid }, { query: { page: 0 } }),
      400,
    );

    const stream = await expectStatus(
      call('GET', '/circuit-runs/{uid}/events', { uid }, { headers: { accept: 'text/event-stream' } }),
      200,
    );
    expect(stream.text).toContain('event: state');
    await expectStatus(call('GET', '/circuit-runs/{uid}/events', { uid: failed.body.payload.uid }), 401);
    await expectStatus(
      call('GET', '/circuit-runs/{uid}/events', { uid: failed.body.payload.uid }, { token: other.token }),
      403,
    );
    await expectStatus(call('GET', '/circuit-runs/{uid}/events', { uid: NO_SUCH_UID }), 404);
    // A signed URL of the stream, opened without a token; a tampered one is 403.
    const signed = await expectStatus(
      call('POST', '/circuit-runs/{uid}/events/url', { uid: failed.body.payload.uid }, { token: owner.token }),
      200,
    );
    const signedQuery = Object.fromEntries(new URL(signed.body.payload.url).searchParams);
    await expectStatus(
      call('GET', '/circuit-runs/{uid}/events', { uid: failed.body.payload.uid }, { query: signedQuery }),
      200,
    );
    await expectStatus(
      call(
        'GET',
        '/circuit-runs/{uid}/events',
        { uid: failed.body.payload.uid },
        { query: { ...signedQuery, signature: 'x' } },
      ),
      403,
    );
    await expectStatus(
      call('POST', '/circuit-runs/{uid}/events/url', { uid: failed.body.payload.uid }, { token: other.token }),
      403,
    );
    await expectStatus(call('POST', '/circuit-runs/{uid}/events/url', { uid: NO_SUCH_UID }), 404);
    const lastEventId = stream.text
      .match(/^id: (.+)$/gm)!
      .at(-1)!
      .slice(4);
    await expectStatus(
      call('GET', '/circuit-runs/{uid}/events', { uid }, { headers: { 'last-event-id': lastEventId } }),
      204,
    );
  });
});

describe('boards', () => {
  test('create, list, read, update, members, stars, ping, delete', async () => {
    const name = `b${unique()}`;
    const board = (
      await expectStatus(call('POST', '/boards', {}, { token: owner.token, body: { name, description: 'd' } }), 200)
    ).body.payload;
    await expectStatus(call('POST', '/boards', {}, { token: owner.token, body: { name } }), 409);
    await expectStatus(call('POST', '/boards', {}, { body: { name: 'x' } }), 401);
    await expectStatus(call('POST', '/boards', {}, { token: owner.token, body: { name: 'x', is_private: 1 } }), 400);
    const priv = (
      await expectStatus(
        call('POST', '/boards', {}, { token: owner.token, body: { name: `p${unique()}`, is_private: true } }),
        200,
      )
    ).body.payload;
    await expectStatus(call('GET', '/boards', {}, { token: owner.token }), 200);
    await expectStatus(call('GET', '/boards', {}), 401);
    await expectStatus(call('GET', '/boards', {}, { token: owner.token, query: { limit: 'x' } }), 400);

    const values = { board_uid: board.uid, username: owner.username, board_name: name };
    await expectStatus(call('GET', '/boards/by-username/{username}/{board_name}', values), 200);
    await expectStatus(
      call('GET', '/boards/by-username/{username}/{board_name}', { ...values, board_name: 'none' }),
      404,
    );
    await expectStatus(
      call('GET', '/boards/by-username/{username}/{board_name}', { ...values, board_name: priv.name }),
      401,
    );
    await expectStatus(call('GET', '/boards/{board_uid}', values), 200);
    await expectStatus(call('GET', '/boards/{board_uid}', { board_uid: priv.uid }, { token: other.token }), 403);
    await expectStatus(call('GET', '/boards/{board_uid}', { board_uid: NO_SUCH_UID }), 404);
    await expectStatus(
      call('PUT', '/boards/{board_uid}', values, { token: owner.token, body: { description: 'new' } }),
      200,
    );
    await expectStatus(
      call('PUT', '/boards/{board_uid}', values, { token: owner.token, body: { name: priv.name } }),
      409,
    );
    await expectStatus(
      call('PUT', '/boards/{board_uid}', values, { token: other.token, body: { description: 'x' } }),
      403,
    );
    await expectStatus(call('PUT', '/boards/{board_uid}', values, { body: { description: 'x' } }), 401);
    await expectStatus(call('PUT', '/boards/{board_uid}', values, { token: owner.token, body: { colour: 'x' } }), 400);

    const { circuit } = await makeCircuit(owner);
    await expectStatus(
      call('POST', '/boards/{board_uid}/circuits', values, { token: owner.token, body: { circuit_uid: circuit.uid } }),
      200,
    );
    await expectStatus(call('POST', '/boards/{board_uid}/circuits', values, { token: owner.token, body: {} }), 400);
    await expectStatus(
      call('POST', '/boards/{board_uid}/circuits', values, { token: other.token, body: { circuit_uid: circuit.uid } }),
      403,
    );
    await expectStatus(
      call('POST', '/boards/{board_uid}/circuits', values, { body: { circuit_uid: circuit.uid } }),
      401,
    );
    await expectStatus(
      call('POST', '/boards/{board_uid}/circuits', values, { token: owner.token, body: { circuit_uid: NO_SUCH_UID } }),
      404,
    );
    await expectStatus(call('GET', '/boards/{board_uid}/circuits', values), 200);
    await expectStatus(call('GET', '/boards/{board_uid}/circuits', { board_uid: priv.uid }), 401);
    await expectStatus(call('GET', '/boards/{board_uid}/circuits', values, { query: { page: 'one' } }), 400);

    const boardValues = { username: owner.username, board_name: name };
    await expectStatus(
      call('GET', '/users/{username}/boards/{board_name}/stars', boardValues, { token: other.token }),
      404,
    );
    await expectStatus(
      call('POST', '/users/{username}/boards/{board_name}/stars', boardValues, { token: other.token }),
      200,
    );
    await expectStatus(
      call('GET', '/users/{username}/boards/{board_name}/stars', boardValues, { token: other.token }),
      200,
    );
    await expectStatus(
      call('DELETE', '/users/{username}/boards/{board_name}/stars', boardValues, { token: other.token }),
      200,
    );
    for (const method of ['GET', 'POST', 'DELETE']) {
      await expectStatus(call(method, '/users/{username}/boards/{board_name}/stars', boardValues), 401);
      await expectStatus(
        call(
          method,
          '/users/{username}/boards/{board_name}/stars',
          { ...boardValues, board_name: priv.name },
          { token: other.token },
        ),
        403,
      );
    }
    await expectStatus(call('GET', '/users/{username}/boards/{board_name}/ping', boardValues), 200);
    await expectStatus(
      call('GET', '/users/{username}/boards/{board_name}/ping', boardValues, { token: BAD_TOKEN }),
      401,
    );

    const circuitValues = { ...values, circuit_uid: circuit.uid };
    await expectStatus(
      call('DELETE', '/boards/{board_uid}/circuits/{circuit_uid}', circuitValues, { token: owner.token }),
      200,
    );
    await expectStatus(
      call('DELETE', '/boards/{board_uid}/circuits/{circuit_uid}', circuitValues, { token: owner.token }),
      404,
    );
    await expectStatus(
      call('DELETE', '/boards/{board_uid}/circuits/{circuit_uid}', circuitValues, { token: other.token }),
      403,
    );
    await expectStatus(call('DELETE', '/boards/{board_uid}/circuits/{circuit_uid}', circuitValues), 401);
    await expectStatus(call('DELETE', '/boards/{board_uid}', values, { token: other.token }), 403);
    await expectStatus(call('DELETE', '/boards/{board_uid}', values), 401);
    await expectStatus(call('DELETE', '/boards/{board_uid}', values, { token: owner.token }), 200);
    await expectStatus(call('DELETE', '/boards/{board_uid}', values, { token: owner.token }), 404);
  });
});

describe('search and blobs', () => {
  test('search answers its rate-limit headers, 400, 401 and 429', async () => {
    await expectStatus(call('GET', '/search', {}, { query: { search: 'c' } }), 200);
    await expectStatus(call('GET', '/search', {}, { query: { search: 'c', type: 'users', limit: 5 } }), 200);
    await expectStatus(call('GET', '/search', {}, {}), 400);
    await expectStatus(call('GET', '/search', {}, { query: { search: 'c', type: 'boards' } }), 400);
    await expectStatus(call('GET', '/search', {}, { query: { search: 'c' }, token: BAD_TOKEN }), 401);
    let limited;
    for (let i = 0; i <= SEARCH_LIMIT && !limited; i++) {
      const res = await call('GET', '/search', {}, { query: { search: 'c' }, token: searcher.token });
      if (res.status === 429) limited = res;
    }
    expect(limited?.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  test('blob metadata (admins see blob_type and path) and download', async () => {
    const blob = await makeBlob(t.app.services.blobStorage, owner.user, { data: '{"a":1}', filename: 'a.json' });
    const plain = await expectStatus(call('GET', '/blobs/{uid}', { uid: blob.uid }), 200);
    expect(plain.body.payload).not.toHaveProperty('path');
    const full = await expectStatus(call('GET', '/blobs/{uid}', { uid: blob.uid }, { token: admin.token }), 200);
    expect(full.body.payload.path).toMatch(/^local:\/\//);
    await expectStatus(call('GET', '/blobs/{uid}', { uid: NO_SUCH_UID }), 404);
    await expectStatus(call('GET', '/blobs/{uid}', { uid: blob.uid }, { token: BAD_TOKEN }), 401);
    await expectStatus(call('GET', '/blobs/{uid}/download', { uid: blob.uid }), 302);
    await expectStatus(call('GET', '/blobs/{uid}/download', { uid: 'nope' }), 404);
    await expectStatus(call('GET', '/blobs/{uid}/download', { uid: blob.uid }, { token: BAD_TOKEN }), 401);
  });
});

describe('my runs and my credits', () => {
  test('the caller’s runs in any state (filters) and ledger; 400 and 401', async () => {
    const runs = await expectStatus(call('GET', '/users/circuit-runs', {}, { token: owner.token }), 200);
    expect(runs.body.data.length).toBeGreaterThan(0);
    await expectStatus(
      call(
        'GET',
        '/users/circuit-runs',
        {},
        { token: owner.token, query: { state: 'COMPLETED', circuit_uid: NO_SUCH_UID, limit: 5, page: 1 } },
      ),
      200,
    );
    await expectStatus(call('GET', '/users/circuit-runs', {}, { token: owner.token, query: { state: 'DONE' } }), 400);
    await expectStatus(
      call('GET', '/users/circuit-runs', {}, { token: owner.token, query: { circuit_uid: 'nope' } }),
      400,
    );
    await expectStatus(call('GET', '/users/circuit-runs', {}), 401);
    await expectStatus(call('GET', '/users/circuit-runs', {}, { token: BAD_TOKEN }), 401);

    const ledger = await expectStatus(
      call('GET', '/users/credit-ledger', {}, { token: owner.token, query: { limit: 100 } }),
      200,
    );
    expect(ledger.body.data.map((row: any) => row.kind)).toContain('grant');
    await expectStatus(call('GET', '/users/credit-ledger', {}, { token: owner.token, query: { page: 0 } }), 400);
    await expectStatus(call('GET', '/users/credit-ledger', {}), 401);
  });

  test('the caller’s API tokens: create a limited one, list them without secrets; 400, 401 and 403', async () => {
    const created = await expectStatus(
      call(
        'POST',
        '/users/tokens',
        {},
        { token: owner.token, body: { label: 'ci', scopes: ['runs:read'], max_credits_per_day: 5 } },
      ),
      200,
    );
    expect(created.body.payload.token).toMatch(/^cst_/);
    await expectStatus(
      call('POST', '/users/tokens', {}, { token: owner.token, body: { scopes: ['runs:everything'] } }),
      400,
    );
    await expectStatus(call('POST', '/users/tokens', {}, { body: {} }), 401);
    await expectStatus(call('POST', '/users/tokens', {}, { token: created.body.payload.token, body: {} }), 403);
    const listed = await expectStatus(
      call('GET', '/users/tokens', {}, { token: owner.token, query: { limit: 1 } }),
      200,
    );
    expect(JSON.stringify(listed.body)).not.toContain(created.body.payload.token);
    // A list like every other: {meta, data}, newest first.
    expect(Object.keys(listed.body).sort()).toEqual(['data', 'meta']);
    expect(listed.body.meta).toEqual({ total_count: expect.any(Number), limit: 1, page: 1 });
    expect(listed.body.meta.total_count).toBeGreaterThanOrEqual(2);
    expect(listed.body.data.map((row: { uid: string }) => row.uid)).toEqual([created.body.payload.api_token.uid]);
    await expectStatus(call('GET', '/users/tokens', {}, { token: owner.token, query: { page: 0 } }), 400);
    await expectStatus(call('GET', '/users/tokens', {}), 401);
  });
});

describe('schedules and webhooks', () => {
  test('schedules: create, list, read, pause, delete', async () => {
    const { circuit } = await makeCircuit(owner);
    const values = { circuit_uid: circuit.uid };
    const created = await expectStatus(
      call('POST', '/circuits/{circuit_uid}/schedules', values, {
        token: owner.token,
        body: { cron: '0 * * * *', input: { name: 'Ada' } },
      }),
      200,
    );
    const uid = created.body.payload.uid;
    await expectStatus(
      call('POST', '/circuits/{circuit_uid}/schedules', values, {
        token: owner.token,
        body: { cron: 'often', input: {} },
      }),
      400,
    );
    await expectStatus(
      call('POST', '/circuits/{circuit_uid}/schedules', values, { body: { cron: '0 * * * *', input: {} } }),
      401,
    );
    await expectStatus(
      call('POST', '/circuits/{circuit_uid}/schedules', values, {
        token: other.token,
        body: { cron: '0 * * * *', input: { name: 'x' } },
      }),
      403,
    );
    await expectStatus(
      call(
        'POST',
        '/circuits/{circuit_uid}/schedules',
        { circuit_uid: NO_SUCH_UID },
        { token: owner.token, body: { cron: '0 * * * *', input: {} } },
      ),
      404,
    );
    await expectStatus(call('GET', '/circuits/{circuit_uid}/schedules', values, { token: owner.token }), 200);
    await expectStatus(call('GET', '/circuits/{circuit_uid}/schedules', values), 401);
    await expectStatus(
      call('GET', '/circuits/{circuit_uid}/schedules', values, { token: owner.token, query: { limit: 0 } }),
      400,
    );
    await expectStatus(call('GET', '/schedules/{uid}', { uid }, { token: owner.token }), 200);
    await expectStatus(call('GET', '/schedules/{uid}', { uid }), 401);
    await expectStatus(call('GET', '/schedules/{uid}', { uid: NO_SUCH_UID }, { token: owner.token }), 404);
    await expectStatus(
      call('PUT', '/schedules/{uid}', { uid }, { token: owner.token, body: { is_paused: true } }),
      200,
    );
    await expectStatus(
      call('PUT', '/schedules/{uid}', { uid }, { token: owner.token, body: { is_paused: 'yes' } }),
      400,
    );
    await expectStatus(call('PUT', '/schedules/{uid}', { uid }, { body: { is_paused: true } }), 401);
    await expectStatus(call('DELETE', '/schedules/{uid}', { uid }, { token: owner.token }), 200);
    await expectStatus(call('DELETE', '/schedules/{uid}', { uid }, { token: owner.token }), 404);
    await expectStatus(call('DELETE', '/schedules/{uid}', { uid }), 401);
  });

  test("webhook secret and a run's deliveries", async () => {
    await expectStatus(call('GET', '/webhooks/default/secret', {}, { token: owner.token }), 200);
    await expectStatus(call('GET', '/webhooks/default/secret', {}), 401);
    const { adaptorUid } = await makeRunnableCircuit(owner, {
      query_schema: { type: 'object', properties: { name: { type: 'string' } } },
      steps: [{ id: 'greet', kind: 'template', template: 'Hello {{input.name}}' }],
    });
    const run = await expectStatus(
      call(
        'POST',
        '/circuit-adaptors/{adaptor_uid}/query',
        { adaptor_uid: adaptorUid },
        { token: owner.token, body: { input: { name: 'x' } } },
      ),
      200,
    );
    const values = { uid: run.body.payload.uid };
    await expectStatus(call('GET', '/circuit-runs/{uid}/webhook-deliveries', values, { token: owner.token }), 200);
    await expectStatus(call('GET', '/circuit-runs/{uid}/webhook-deliveries', values), 401);
    await expectStatus(
      call('GET', '/circuit-runs/{uid}/webhook-deliveries', { uid: NO_SUCH_UID }, { token: owner.token }),
      404,
    );
  });
});

describe('batches and estimates', () => {
  test('submit a batch, read it and its runs, cancel it; estimate a run; tags and metadata filters', async () => {
    const { adaptorUid } = await makeRunnableCircuit(owner, {
      query_schema: { type: 'object', properties: { name: { type: 'string' } } },
      steps: [{ id: 'greet', kind: 'template', template: 'Hello {{input.name}}' }],
    });
    const adaptor = { adaptor_uid: adaptorUid };
    const batch = await expectStatus(
      call('POST', '/circuit-adaptors/{adaptor_uid}/batches', adaptor, {
        token: owner.token,
        body: { inputs: [{ name: 'a' }, { name: 'b' }], tags: ['contract'], metadata: { 'a key': 'v' } },
      }),
      200,
    );
    await expectStatus(
      call('POST', '/circuit-adaptors/{adaptor_uid}/batches', adaptor, {
        token: owner.token,
        body: { inputs: [{ name: 1 }] },
      }),
      400,
    );
    await expectStatus(
      call('POST', '/circuit-adaptors/{adaptor_uid}/batches', adaptor, { body: { inputs: [{}] } }),
      401,
    );
    await expectStatus(
      call(
        'POST',
        '/circuit-adaptors/{adaptor_uid}/batches',
        { adaptor_uid: NO_SUCH_UID },
        { token: owner.token, body: { inputs: [{}] } },
      ),
      404,
    );
    const values = { uid: batch.body.payload.uid };
    await expectStatus(call('GET', '/batches/{uid}', values, { token: owner.token }), 200);
    await expectStatus(call('GET', '/batches/{uid}', values, { token: other.token }), 403);
    await expectStatus(call('GET', '/batches/{uid}', values), 401);
    await expectStatus(call('GET', '/batches/{uid}', { uid: NO_SUCH_UID }, { token: owner.token }), 404);
    await expectStatus(call('GET', '/batches/{uid}/runs', values, { token: owner.token }), 200);
    await expectStatus(call('GET', '/batches/{uid}/runs', values, { token: owner.token, query: { limit: 0 } }), 400);
    await expectStatus(call('GET', '/batches/{uid}/runs', values), 401);
    await expectStatus(call('POST', '/batches/{uid}/cancel', values, { token: owner.token }), 200);
    await expectStatus(call('POST', '/batches/{uid}/cancel', values, { token: other.token }), 403);
    await expectStatus(call('POST', '/batches/{uid}/cancel', values), 401);
    await expectStatus(
      call('POST', '/circuit-adaptors/{adaptor_uid}/estimate', adaptor, {
        token: owner.token,
        body: { input: { name: 'a' } },
      }),
      200,
    );
    await expectStatus(
      call('POST', '/circuit-adaptors/{adaptor_uid}/estimate', adaptor, {
        token: owner.token,
        body: { input: { name: 1 } },
      }),
      400,
    );
    await expectStatus(call('POST', '/circuit-adaptors/{adaptor_uid}/estimate', adaptor, { body: { input: {} } }), 401);
    await expectStatus(
      call(
        'POST',
        '/circuit-adaptors/{adaptor_uid}/estimate',
        { adaptor_uid: NO_SUCH_UID },
        { token: owner.token, body: { input: {} } },
      ),
      404,
    );
    await expectStatus(
      call('POST', '/circuit-adaptors/{adaptor_uid}/query', adaptor, {
        token: owner.token,
        body: { input: { name: 'x' }, tags: ['contract'], metadata: { k: 'v' }, max_credits: 5 },
      }),
      200,
    );
    await expectStatus(
      call('POST', '/circuit-adaptors/{adaptor_uid}/query', adaptor, {
        token: owner.token,
        body: { input: { name: 'x' }, tags: Array(11).fill('t') },
      }),
      400,
    );
    await expectStatus(
      call(
        'GET',
        '/users/circuit-runs',
        {},
        {
          token: owner.token,
          query: { tag: 'contract', 'metadata.a key': 'v', created_after: '2020-01-01T00:00:00Z' },
        },
      ),
      200,
    );
    await expectStatus(
      call('GET', '/users/circuit-runs', {}, { token: owner.token, query: { created_before: 'soon' } }),
      400,
    );

    // Cancel and replay by filter: the caller's own runs of the filter.
    await expectStatus(
      call('GET', '/users/circuit-runs', {}, { token: owner.token, query: { batch_uid: values.uid } }),
      200,
    );
    const canceled = await expectStatus(
      call('POST', '/users/circuit-runs/cancel', {}, { token: owner.token, body: { filter: { tag: 'contract' } } }),
      200,
    );
    expect(canceled.body.payload).toMatchObject({ matched: expect.any(Number), truncated: false });
    await expectStatus(
      call(
        'POST',
        '/users/circuit-runs/cancel',
        {},
        { token: owner.token, body: { filter: { tag: 'contract' } }, headers: { 'Idempotency-Key': 'bulk-1' } },
      ),
      200,
    );
    await expectStatus(
      call(
        'POST',
        '/users/circuit-runs/cancel',
        {},
        { token: owner.token, body: { filter: { tag: 'other' } }, headers: { 'Idempotency-Key': 'bulk-1' } },
      ),
      422,
    );
    await expectStatus(
      call('POST', '/users/circuit-runs/cancel', {}, { token: owner.token, body: { filter: { state: 'DONE' } } }),
      400,
    );
    await expectStatus(call('POST', '/users/circuit-runs/cancel', {}, { body: { filter: {} } }), 401);
    const replayed = await expectStatus(
      call(
        'POST',
        '/users/circuit-runs/replay',
        {},
        { token: owner.token, body: { filter: { batch_uid: values.uid }, mode: 'recorded' } },
      ),
      200,
    );
    expect(replayed.body.payload).toMatchObject({ batch_uid: expect.any(String), truncated: false });
    await expectStatus(
      call('GET', '/batches/{uid}', { uid: replayed.body.payload.batch_uid }, { token: owner.token }),
      200,
    );
    // Nothing matched: no batch, its uid left out.
    const none = await expectStatus(
      call('POST', '/users/circuit-runs/replay', {}, { token: owner.token, body: { filter: { tag: 'none-such' } } }),
      200,
    );
    expect(none.body.payload).toEqual({ matched: 0, replayed: 0, truncated: false });
    await expectStatus(
      call('POST', '/users/circuit-runs/replay', {}, { token: owner.token, body: { filter: {}, mode: 'sideways' } }),
      400,
    );
    await expectStatus(call('POST', '/users/circuit-runs/replay', {}, { body: { filter: {} } }), 401);
  });
});

test('every answer matched the document: 0 violations', () => {
  // Not vacuous: run alone (jest -t), nothing was replayed and this fails rather than passes.
  expect(checker.seen.size).toBeGreaterThan(40);
  expect(checker.violations).toEqual([]);
});

test('every documented operation was replayed with a success and an error', () => {
  const missing: string[] = [];
  for (const [template, item] of Object.entries<any>(doc.paths)) {
    for (const method of Object.keys(item)) {
      const statuses = [...(checker.seen.get(`${method.toUpperCase()} ${template}`) ?? [])];
      if (!statuses.some((s) => s < 400)) missing.push(`${method.toUpperCase()} ${template}: no success case`);
      if (!statuses.some((s) => s >= 400)) missing.push(`${method.toUpperCase()} ${template}: no error case`);
    }
  }
  expect(missing).toEqual([]);
});
