import { Writable } from 'node:stream';
import pino from 'pino';
import { auditServer } from 'graphql-http';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';

// GraphQL over HTTP at /graphql: every mistake answered as GraphQL-shaped JSON, the
// graphql-http audit passing, and the log holding structured lines only.
let t: TestApp;
let owner: TestUser;
const logLines: string[] = [];
beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  t = await startTestApp({}, { log: pino({ level: 'info' }, sink) });
  owner = await makeUser();
});
afterAll(async () => {
  await t.close();
});

async function post(body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: body as string,
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', text, json: () => JSON.parse(text) };
}

test('the graphql-http server audit: no MUST fails, every SHOULD passes, and only the GET MAYs are declined', async () => {
  const results = await auditServer({ url: `${t.url}/graphql` });
  expect(results.filter((r) => r.status === 'error')).toEqual([]);
  // Apollo's CSRF prevention refuses a GET without a preflight-forcing header (GET /graphql reads can
  // still move counters such as a blob's totalReads); with `apollo-require-preflight` GET works.
  const declined = results
    .filter((r) => r.status !== 'ok')
    .map((r) => r.id)
    .sort();
  expect(declined).toEqual(['5A70', '6A70', 'D6D5']);
  expect(results.filter((r) => r.status !== 'ok').every((r) => r.name.startsWith('MAY'))).toBe(true);
});

test('malformed JSON, a body over 1 MiB and a foreign charset are JSON errors, never an HTML page', async () => {
  const malformed = await post('{"query": ');
  expect(malformed.status).toBe(400);
  expect(malformed.type).toMatch(/^application\/json/);
  expect(malformed.json()).toEqual({
    errors: [{ message: 'Malformed JSON body', extensions: { code: 'BadClientData' } }],
  });

  const big = await post(JSON.stringify({ query: `{ __typename }${' '.repeat(1024 * 1024)}` }));
  expect(big.status).toBe(413);
  expect(big.json()).toEqual({
    errors: [{ message: 'The request body is larger than 1 MiB', extensions: { code: 'PayloadTooLarge' } }],
  });

  const latin1 = await post('{"query":"{ __typename }"}', { 'content-type': 'application/json; charset=latin1' });
  expect(latin1.status).toBe(415);
  expect(latin1.json()).toEqual({
    errors: [
      { message: 'Unsupported charset "latin1": send JSON as UTF-8', extensions: { code: 'UnsupportedMediaType' } },
    ],
  });

  for (const answer of [malformed, big, latin1]) {
    expect(answer.text).not.toMatch(/<html|<pre>|at [\w.]+ \(|node_modules|\/work\//i);
  }
});

test('parse, validation and coercion failures are 200 for application/json clients and 400 for graphql-response+json', async () => {
  const cases = [
    { query: '{' },
    { query: '{ noSuchField }' },
    { query: 'query($u: ID!) { circuitRun(uid: $u) { uid } }', variables: { u: { not: 'an id' } } },
  ];
  for (const body of cases) {
    const legacy = await post(JSON.stringify(body), { accept: 'application/json' });
    expect({ body, status: legacy.status }).toEqual({ body, status: 200 });
    expect(legacy.json().errors[0].extensions.code).toBe('BadClientData');
    expect(legacy.json()).not.toHaveProperty('data');
    const modern = await post(JSON.stringify(body), { accept: 'application/graphql-response+json' });
    expect({ body, status: modern.status }).toEqual({ body, status: 400 });
  }
});

test('an operation over the cost limit is refused before it runs: 100 aliases of queryCircuitAdaptor, 20 reads of a blob', async () => {
  const aliases = Array.from(
    { length: 100 },
    (_, i) => `r${i}: queryCircuitAdaptor(adaptorUid: "00000000-0000-0000-0000-000000000000", input: {}) { uid }`,
  ).join('\n');
  const runs = await t.gql(`mutation { ${aliases} }`, {}, owner.token);
  expect(runs.code).toBe('BadClientData');
  expect(runs.errors?.[0].message).toBe(
    'The operation costs 10000, more than the limit of 1000 (GRAPHQL_MAX_COST); split it into several requests',
  );
  expect(runs.data).toBeUndefined();

  const reads = Array.from(
    { length: 20 },
    (_, i) => `b${i}: blob(uid: "00000000-0000-0000-0000-000000000000") { totalReads }`,
  ).join('\n');
  const blob = await t.gql(`{ ${reads} }`);
  expect(blob.errors?.[0].message).toMatch(/^The operation costs \d+, more than the limit of 1000/);

  // Lists count by the page size asked for.
  const pages = await t.gql(
    '{ search(search: "x", limit: 100) { items { ... on CircuitSearchResult { circuit { versions(limit: 100) { items { uid } } } } } } }',
  );
  expect(pages.errors?.[0].message ?? '').toMatch(/more than the limit|Cannot query field/);
  // An ordinary query is far below the limit.
  expect(
    (await t.gql('{ viewer { username } search(search: "x") { totalCount } }', {}, owner.token)).errors,
  ).toBeUndefined();
});

test('the log holds one JSON object per line, errors as structured fields (no multi-line stack traces)', async () => {
  await post('{"query": ');
  await post('not json at all', { 'content-type': 'text/plain' });
  for (const line of logLines) {
    expect(() => JSON.parse(line)).not.toThrow();
  }
});
