import { useTestApp } from './support/app';
import { HELLO_DEFINITION, makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit } from './support/run-factories';
import { Circuit } from '../src/models';

// Text in JSON input: NUL, lone surrogates and nesting deeper than 64 are 400 BadClientData naming the
// field, on REST and GraphQL alike; never a 500, never silently rewritten.
const t = useTestApp();
let owner: TestUser;
let adaptorUid: string;
beforeAll(async () => {
  owner = await makeUser();
  ({ adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION, { name: 'hygiene' }));
});

const NUL = '\u0000';
const LONE = '\ud800';

function deep(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = { x: value };
  return value;
}

describe('REST', () => {
  test('a NUL in a body field is 400 naming the field, and nothing is stored or rewritten', async () => {
    const res = await t.rest('POST', '/circuits', {
      token: owner.token,
      body: { name: 'with-nul', description: `a${NUL}b` },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: { code: 'BadClientData', message: 'description contains a NUL character (U+0000)' },
    });
    expect(await Circuit.count({ where: { name: 'with-nul' } })).toBe(0);
  });

  test('an escaped lone surrogate (\\ud800) in a body is 400 naming the field', async () => {
    const res = await t.rest('POST', '/circuits', {
      token: owner.token,
      rawBody: '{"name":"lone","description":"x\\ud800y"}',
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'BadClientData',
      message: 'description contains a lone surrogate (invalid Unicode)',
    });
    const low = await t.rest('POST', '/circuits', {
      token: owner.token,
      rawBody: '{"name":"lone","description":"\\udc00"}',
    });
    expect(low.body.error.message).toBe('description contains a lone surrogate (invalid Unicode)');
    // A proper pair (an emoji) is fine.
    const pair = await t.rest('POST', '/circuits', {
      token: owner.token,
      body: { name: 'pair-ok', description: 'rocket \ud83d\ude80' },
    });
    expect(pair.status).toBe(200);
  });

  test('query input: a NUL deep inside, a lone surrogate in a key, and 5,000-deep nesting are 400 naming where', async () => {
    const nul = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, {
      token: owner.token,
      body: { input: { name: 'x', list: [{ a: `1${NUL}` }] } },
    });
    expect(nul.status).toBe(400);
    expect(nul.body.error).toEqual({
      code: 'BadClientData',
      message: 'input.list[0].a contains a NUL character (U+0000)',
    });
    const key = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, {
      token: owner.token,
      rawBody: '{"input":{"name":"x","k\\ud800":1}}',
    });
    expect(key.body.error.message).toBe('input has a key that contains a lone surrogate (invalid Unicode)');
    const nested = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, {
      token: owner.token,
      rawBody: `{"input":${'['.repeat(5000)}${']'.repeat(5000)}}`,
    });
    expect(nested.status).toBe(400);
    expect(nested.body.error.message).toMatch(/^input(\[0\])+ nests deeper than 64 levels$/);
    const ok = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, {
      token: owner.token,
      body: { input: { name: 'x', d: deep(60) } },
    });
    expect(ok.status).toBe(200);
  });

  test('a 500,000-deep body (1 MiB) is a 400, not a stack overflow', async () => {
    const res = await t.rest('POST', '/circuits', {
      token: owner.token,
      rawBody: `${'['.repeat(500_000)}${']'.repeat(500_000)}`,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BadClientData');
  });

  test('a NUL in a query parameter is 400 naming the parameter', async () => {
    const res = await t.rest('GET', '/search?search=a%00b');
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'BadClientData',
      message: 'query parameter search contains a NUL character (U+0000)',
    });
  });

  test('malformed JSON and invalid UTF-8 are 400, a foreign charset 415, all with the envelope', async () => {
    const malformed = await t.rest('POST', '/circuits', { token: owner.token, rawBody: '{"name":' });
    expect(malformed).toMatchObject({
      status: 400,
      body: { error: { code: 'BadClientData', message: 'Malformed JSON body' } },
    });
    const latin1 = await t.rest('POST', '/circuits', {
      token: owner.token,
      rawBody: '{"name":"x"}',
      headers: { 'content-type': 'application/json; charset=latin1' },
    });
    expect(latin1).toMatchObject({
      status: 415,
      body: { error: { code: 'UnsupportedMediaType', message: 'Unsupported charset "latin1": send JSON as UTF-8' } },
    });
    const res = await fetch(`${t.url}/api/v1/circuits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: { code: 'BadClientData', message: 'The request body is not valid UTF-8' },
    });
  });
});

describe('GraphQL', () => {
  const createCircuit = 'mutation($input: CreateCircuitInput!) { createCircuit(input: $input) { uid } }';

  test('a NUL or lone surrogate in variables is 400 naming the variable path', async () => {
    const nul = await t.gql(createCircuit, { input: { name: 'gql-nul', description: `a${NUL}` } }, owner.token);
    expect(nul.status).toBe(400);
    expect(nul.errors).toEqual([
      {
        message: 'variables.input.description contains a NUL character (U+0000)',
        extensions: { code: 'BadClientData' },
      },
    ]);
    const lone = await t.gql(createCircuit, { input: { name: 'gql-lone', description: `a${LONE}` } }, owner.token);
    expect(lone.errors?.[0].message).toBe('variables.input.description contains a lone surrogate (invalid Unicode)');
  });

  test('a NUL in a String argument literal or a JSON scalar literal is BadClientData naming the argument', async () => {
    const stringArg = await t.gql(
      'mutation { createCircuit(input: {name: "lit", description: "a\\u0000b"}) { uid } }',
      {},
      owner.token,
    );
    expect(stringArg.code).toBe('BadClientData');
    expect(stringArg.errors?.[0].message).toBe('createCircuit.input.description contains a NUL character (U+0000)');
    const jsonLiteral = await t.gql(
      `mutation { queryCircuitAdaptor(adaptorUid: "${adaptorUid}", input: {name: "x", nested: {k: ["\\u0000"]}}) { uid } }`,
      {},
      owner.token,
    );
    expect(jsonLiteral.code).toBe('BadClientData');
    expect(jsonLiteral.errors?.[0].message).toBe(
      'queryCircuitAdaptor.input.nested.k contains a NUL character (U+0000)',
    );
    const search = await t.gql('{ search(search: "a\\u0000") { totalCount } }');
    expect(search.errors?.[0]).toEqual({
      message: 'search.search contains a NUL character (U+0000)',
      extensions: { code: 'BadClientData' },
    });
    expect(await Circuit.count({ where: { name: 'lit' } })).toBe(0);
  });

  test('a document nested 5,000 levels deep is BadClientData, not a stack overflow or Internal', async () => {
    const query = `{ search(search: "x", type: ${'['.repeat(5000)}CIRCUITS${']'.repeat(5000)}) { totalCount } }`;
    const res = await t.gql(query);
    expect(res.status).toBe(400);
    expect(res.errors).toEqual([
      { message: 'The GraphQL document nests deeper than 64 levels', extensions: { code: 'BadClientData' } },
    ]);
    const vars = await t.http('POST', '/graphql', {
      rawBody: `{"query":"query($x: JSON) { __typename }","variables":{"x":${'{"x":'.repeat(5000)}1${'}'.repeat(5000)}}}`,
    });
    expect(vars.status).toBe(400);
    expect(vars.body.errors[0].message).toMatch(/^variables\.x(\.x)+ nests deeper than 64 levels$/);
  });
});
