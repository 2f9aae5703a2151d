import { useTestApp } from './support/app';
import { makeCircuit, makeUser, TestUser } from './support/factories';
import { routes } from '../rest-bridge/routes';
import { pathParamNames } from '../rest-bridge/validate';

const t = useTestApp();
let owner: TestUser;
beforeAll(async () => {
  owner = await makeUser({ credits: 100 });
});

function expectBadInput(res: { status: number; body: any }, message: string) {
  expect({ status: res.status, body: res.body }).toEqual({
    status: 400,
    body: { error: { code: 'BadClientData', message } },
  });
}

describe('body fields are checked against the route schema, named as REST names them', () => {
  test('a wrongly typed field names the snake_case field, not a GraphQL variable', async () => {
    expectBadInput(
      await t.rest('POST', '/circuits', { token: owner.token, body: { name: 'x', is_private: 'yes' } }),
      'is_private must be boolean',
    );
    expectBadInput(await t.rest('POST', '/circuits', { token: owner.token, body: { name: 5 } }), 'name must be string');
    expectBadInput(await t.rest('POST', '/circuits', { token: owner.token, body: {} }), 'name is required');
    expectBadInput(
      await t.rest('POST', '/circuits', { token: owner.token, body: { name: 'x', colour: 'red' } }),
      'Unknown field: colour',
    );
    expectBadInput(
      await t.rest('POST', '/circuits', { token: owner.token, body: ['x'] }),
      'The request body must be a JSON object',
    );
  });

  test('nested fields are named with their path', async () => {
    const { circuit } = await makeCircuit(owner);
    const adaptor =
      circuit.uid && (await t.rest('GET', `/circuits/${circuit.uid}`, { token: owner.token })).body.payload.adaptor_uid;
    const query = (body: unknown) => t.rest('POST', `/circuit-adaptors/${adaptor}/query`, { token: owner.token, body });
    expectBadInput(await query({ input: { name: 'a' }, context: { version: 3 } }), 'context.version must be string');
    expectBadInput(await query({ input: { name: 'a' }, context: { versoin: 'x' } }), 'Unknown field: context.versoin');
    expectBadInput(await query({ input: 'a' }), 'input must be object');
  });

  test('every body field of every route refuses a value of the wrong type by its REST name', async () => {
    const { circuit } = await makeCircuit(owner);
    const problems: string[] = [];
    for (const route of routes.filter((r) => r.body && r.shape !== 'event-stream')) {
      const path = route.path.replace(/:([a-z_]+)/g, (_m, name: string) =>
        name === 'username' ? owner.username : name.endsWith('uid') ? circuit.uid : circuit.name,
      );
      for (const [field, schema] of Object.entries(route.body!.properties)) {
        // A field that takes any JSON value (a signal's data) has no wrong type.
        if (!schema.type && !schema.anyOf) continue;
        const types = schema.type
          ? [String(schema.type)]
          : ((schema.anyOf ?? []) as { type?: string }[]).map((branch) => String(branch.type));
        const wrong = types.includes('string') ? 12 : 'text';
        const valid: Record<string, unknown> = { object: {}, boolean: true, integer: 1, number: 1, array: [] };
        const required = Object.fromEntries(
          (route.body!.required ?? []).map((name) => [name, valid[String(route.body!.properties[name].type)] ?? 'x']),
        );
        const res = await t.rest(route.method, path, { token: owner.token, body: { ...required, [field]: wrong } });
        const message: string = res.body?.error?.message ?? '';
        if (res.status !== 400 || message !== `${field} must be ${types.join(' or ')}`)
          problems.push(`${route.method} ${route.path} ${field}: ${res.status} ${message}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('content types (RFC 9110 §15.5.16)', () => {
  test('a body that is not JSON is 415 UnsupportedMediaType, saying what to send', async () => {
    const res = await fetch(`${t.url}/api/v1/circuits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: '{"name":"form"}',
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual({
      error: {
        code: 'UnsupportedMediaType',
        message:
          'The request body must be JSON: send Content-Type: application/json (not application/x-www-form-urlencoded)',
      },
    });
  });

  test('a body without Content-Type is 415 too; JSON with a +json type and an empty PUT are accepted', async () => {
    const res = await fetch(`${t.url}/api/v1/circuits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}` },
      body: new Blob(['{"name":"untyped"}']),
    });
    expect(res.status).toBe(415);
    expect((await res.json()).error.code).toBe('UnsupportedMediaType');

    const typed = await t.rest('POST', '/circuits', {
      token: owner.token,
      rawBody: '{"name":"suffixed"}',
      headers: { 'content-type': 'application/vnd.api+json' },
    });
    expect(typed.status).toBe(200);
    const { circuit } = await makeCircuit(owner);
    expect((await t.rest('PUT', `/circuits/${circuit.uid}/deprecate`, { token: owner.token })).status).toBe(200);
  });

  test('an unsupported charset is 415 in the JSON envelope', async () => {
    const res = await t.rest('POST', '/circuits', {
      token: owner.token,
      rawBody: '{"name":"x"}',
      headers: { 'content-type': 'application/json; charset=koi8-r' },
    });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('UnsupportedMediaType');
  });
});

describe('query parameters and headers', () => {
  test.each([
    ['limit=abc', 'limit must be integer'],
    ['limit=1.5', 'limit must be integer'],
    ['limit=0', 'limit must be >= 1'],
    ['page=-2', 'page must be >= 1'],
    ['limit=99999999999', 'limit must be <= 2147483647'],
    ['type=boards', 'type must be one of all, circuits, users'],
    ['limit=1&limit=2', 'query parameter limit must be given once'],
  ])('/search?search=x&%s → %s', async (query, message) => {
    expectBadInput(await t.rest('GET', `/search?search=x&${query}`), message);
  });

  test('a missing required query parameter is named', async () => {
    expectBadInput(await t.rest('GET', '/search'), 'search is required');
    expectBadInput(await t.rest('GET', '/search?search='), 'search is required');
  });

  test('a malformed Idempotency-Key is refused before anything runs', async () => {
    const { circuit } = await makeCircuit(owner);
    const adaptor = (await t.rest('GET', `/circuits/${circuit.uid}`, { token: owner.token })).body.payload.adaptor_uid;
    const res = await t.rest('POST', `/circuit-adaptors/${adaptor}/query`, {
      token: owner.token,
      body: { input: { name: 'a' } },
      headers: { 'idempotency-key': 'k'.repeat(256) },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^The Idempotency-Key header is invalid/);
  });
});

test('a path parameter that is not a uid names nothing: 404 before any lookup', async () => {
  const uidRoutes = routes.filter(
    (r) => r.shape !== 'event-stream' && pathParamNames(r.path).some((name) => r.params?.[name]?.format === 'uuid'),
  );
  expect(uidRoutes.length).toBeGreaterThan(10);
  for (const route of uidRoutes) {
    const path = route.path.replace(/:([a-z_]+)/g, (_m, name: string) =>
      route.params?.[name]?.format === 'uuid' ? 'not-a-uid' : 'x',
    );
    const res = await t.rest(route.method, path, { token: owner.token, ...(route.body ? { body: {} } : {}) });
    expect({ route: `${route.method} ${route.path}`, status: res.status, code: res.body?.error?.code }).toEqual({
      route: `${route.method} ${route.path}`,
      status: 404,
      code: 'NotFound',
    });
  }
});

describe('paths are matched as documented', () => {
  test('a path that is not validly percent-encoded is 400, a documented path with a trailing slash is the same route, an unknown one 404', async () => {
    expectBadInput(await t.rest('GET', '/circuit-runs/%E0%A4%A'), 'The path is not validly percent-encoded');
    expectBadInput(await t.rest('GET', '/circuit-runs/%ED%A0%80'), 'The path is not validly percent-encoded'); // a lone surrogate
    expect(await t.rest('GET', '/circuit-runs/%00')).toMatchObject({
      status: 404,
      body: { error: { code: 'NotFound' } },
    }); // NUL names no run
    expect(await t.rest('GET', `/circuit-runs/${'a'.repeat(8000)}`)).toMatchObject({
      status: 404,
      body: { error: { code: 'NotFound' } },
    });
    const { circuit } = await makeCircuit(owner);
    const plain = await t.rest('GET', `/circuits/${circuit.uid}`, { token: owner.token });
    const slashed = await t.rest('GET', `/circuits/${circuit.uid}/`, { token: owner.token });
    expect({ status: slashed.status, uid: slashed.body.payload?.uid }).toEqual({
      status: 200,
      uid: plain.body.payload.uid,
    });
    expect(await t.rest('GET', '/circuit-runz/x')).toMatchObject({
      status: 404,
      body: { error: { code: 'NotFound', message: 'No such route' } },
    }); // Outside /api/v1 as well: the envelope, not Express's HTML page.
    for (const path of ['/api/etc', '/nope', '/api', '/favicon.ico/..%2f']) {
      const res = await fetch(`${t.url}${path}`, { method: path === '/api' ? 'POST' : 'GET' });
      expect({ path, status: res.status, type: res.headers.get('content-type'), body: await res.json() }).toEqual({
        path,
        status: 404,
        type: 'application/json; charset=utf-8',
        body: { error: { code: 'NotFound', message: 'No such route' } },
      });
    }
  });
});
