import crypto from 'node:crypto';
import { useTestApp } from './support/app';
import { makeCircuit, makeUser, TestUser } from './support/factories';
import { routes } from '../rest-bridge/routes';
import type { Route } from '../rest-bridge/route';

/**
 * Authentication comes before validation on every route of the table: a route that needs a token
 * answers 401 without one whatever else is wrong with the request (its body, its media type, its
 * query, its path), and a route that takes none or an optional one answers as its validation says.
 */
const t = useTestApp();
let owner: TestUser;
let circuitName: string;
beforeAll(async () => {
  owner = await makeUser({ credits: 100 });
  circuitName = (await makeCircuit(owner)).circuit.name;
});

const label = (route: Route) => `${route.method} ${route.path}`;

/** The route's path with well-formed values: a uid that names nothing, the owner's name, a circuit name. */
function pathOf(route: Route): string {
  return route.path.replace(/:([a-z_]+)/g, (_m, name: string) =>
    name === 'username'
      ? owner.username
      : name.endsWith('uid') || name === 'a' || name === 'b'
        ? crypto.randomUUID()
        : circuitName,
  );
}

/** A query that fails its route's schema where the route takes one (limit 0, or a parameter given twice). */
function badQuery(route: Route): string {
  const names = Object.keys(route.query ?? {});
  if (names.includes('limit')) return '?limit=0';
  return names.length ? `?${names[0]}=1&${names[0]}=2` : '';
}

async function send(route: Route, init: { body?: string; contentType?: string; token?: string } = {}) {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.contentType) headers['content-type'] = init.contentType;
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const res = await fetch(`${t.url}/api/v1${pathOf(route)}${badQuery(route)}`, {
    method: route.method,
    headers,
    body: route.method === 'GET' ? undefined : init.body,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body: body as { error?: { code?: string; message?: string } } };
}

const UNAUTHORIZED = { error: { code: 'Unauthorized', message: expect.any(String) } };
const required = routes.filter((route) => route.auth === 'required');
const open = routes.filter((route) => route.auth !== 'required' && route.shape !== 'event-stream');

test('the table has routes of both kinds to walk', () => {
  expect(required.length).toBeGreaterThan(30);
  expect(open.length).toBeGreaterThan(20);
});

test('every route that needs a token answers 401 without one, before its body, media type, JSON and query are checked', async () => {
  const wrong: string[] = [];
  for (const route of required) {
    const attempts: { body?: string; contentType?: string }[] =
      route.method === 'GET'
        ? [{}]
        : [
            { body: JSON.stringify({ not_a_field: 1 }), contentType: 'application/json' },
            { body: '{"routes": ', contentType: 'application/json' },
            { body: 'routes=1', contentType: 'application/x-www-form-urlencoded' },
            { body: JSON.stringify({ nul: 'a\u0000b' }), contentType: 'application/json' },
          ];
    for (const attempt of attempts) {
      const res = await send(route, attempt);
      if (res.status !== 401 || !expect.objectContaining(UNAUTHORIZED).asymmetricMatch(res.body)) {
        wrong.push(`${label(route)} ${attempt.contentType ?? ''}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
  }
  expect(wrong).toEqual([]);
});

test('an invalid token is 401 on every route, whatever else is wrong with the request', async () => {
  const wrong: string[] = [];
  for (const route of [...required, ...open]) {
    const res = await send(route, { token: 'cst_not-a-token', body: '{"routes": ', contentType: 'application/json' });
    if (res.status !== 401 || res.body?.error?.code !== 'Unauthorized')
      wrong.push(`${label(route)}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  expect(wrong).toEqual([]);
});

test('routes that need no token keep their answers without one: validation first, never 401', async () => {
  const wrong: string[] = [];
  for (const route of open) {
    const res = await send(route, { body: JSON.stringify({ not_a_field: 1 }), contentType: 'application/json' });
    // A bad query is 400 before the operation runs; without one, a uid that names nothing is 404 and the public circuit 200.
    const expected = badQuery(route) ? [400] : [200, 404];
    if (!expected.includes(res.status)) wrong.push(`${label(route)}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  expect(wrong).toEqual([]);
});

test('PUT /circuits/{uid}/aliases/{name} without a token is 401, not "routes is required"', async () => {
  const { circuit } = await makeCircuit(owner);
  const anonymous = await t.rest('PUT', `/circuits/${circuit.uid}/aliases/live`, { body: {} });
  expect(anonymous).toMatchObject({
    status: 401,
    body: { error: { code: 'Unauthorized', message: 'A valid bearer token is required' } },
  });
  // With the token, the body is checked as before.
  const owned = await t.rest('PUT', `/circuits/${circuit.uid}/aliases/live`, { token: owner.token, body: {} });
  expect(owned).toMatchObject({
    status: 400,
    body: { error: { code: 'BadClientData', message: 'routes is required' } },
  });
});
