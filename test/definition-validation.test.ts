import { CircuitEmbed } from '../src/models';
import { useTestApp } from './support/app';
import { HELLO_DEFINITION, makeCircuit, makeUser, TestUser } from './support/factories';
import { embeddingDefinition, makeEmbeddingCircuit } from './support/circuit-factories';

const t = useTestApp();
let owner: TestUser;
let circuitUid: string;
beforeAll(async () => {
  owner = await makeUser();
  circuitUid = (await makeCircuit(owner, { name: 'target' }, null)).circuit.uid;
});

const PUBLISH = `mutation($circuitUid: ID!, $definition: JSON!, $primary: Boolean) {
  publishCircuitVersion(circuitUid: $circuitUid, definition: $definition, primary: $primary) { uid number isPrimary }
}`;

function publish(definition: unknown, uid = circuitUid, token = owner.token) {
  return t.gql(PUBLISH, { circuitUid: uid, definition }, token);
}

const schema = { type: 'object', properties: { name: { type: 'string' } } };
const withSteps = (...steps: unknown[]) => ({ query_schema: schema, steps });
const tpl = (id: string, template: unknown = 'hi') => ({ id, kind: 'template', template });

/** [what is wrong, definition, a fragment the message must contain] */
const INVALID: [string, unknown, string][] = [
  ['not an object', [1, 2], 'definition must be a JSON object'],
  ['a string', 'steps', 'definition must be a JSON object'],
  ['unknown top-level field', { ...HELLO_DEFINITION, extra: 1 }, 'Unknown field: definition.extra'],
  ['missing query_schema', { steps: [tpl('a')] }, 'query_schema'],
  [
    'query_schema not an object schema',
    { query_schema: { type: 'array' }, steps: [tpl('a')] },
    'query_schema must describe an object',
  ],
  [
    'query_schema that does not compile',
    { query_schema: { type: 'object', properties: { a: { type: 'strng' } } }, steps: [tpl('a')] },
    'query_schema is not a valid JSON Schema',
  ],
  [
    'query_schema with a bad $ref',
    { query_schema: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } }, steps: [tpl('a')] },
    'query_schema is not a valid JSON Schema',
  ],
  ['steps missing', { query_schema: schema }, 'definition.steps must be a non-empty array'],
  ['steps empty', withSteps(), 'definition.steps must be a non-empty array'],
  ['a step that is not an object', withSteps('a'), 'definition.steps[0] must be an object'],
  ['a bad step id', withSteps(tpl('1abc')), 'definition.steps[0].id must match'],
  ['a step id with a dash', withSteps(tpl('a-b')), 'definition.steps[0].id must match'],
  ['a missing step id', withSteps({ kind: 'template', template: 'x' }), 'definition.steps[0].id'],
  ['duplicate step ids', withSteps(tpl('a'), tpl('a')), 'duplicate step id a'],
  ['an unknown kind', withSteps({ id: 'a', kind: 'python' }), 'step a: kind must be one of'],
  [
    'an unknown step field',
    withSteps({ ...tpl('a'), expression: '1' }),
    'Unknown field: step a.expression (a template step allows',
  ],
  ['template missing', withSteps({ id: 'a', kind: 'template' }), 'step a.template is required'],
  ['template not a string', withSteps(tpl('a', 5)), 'step a.template must be a string template'],
  [
    'template that does not parse',
    withSteps(tpl('a', 'Hello {{input.name')),
    'step a.template: template does not parse',
  ],
  [
    'transform that does not parse',
    withSteps({ id: 'a', kind: 'transform', expression: '$uppercase(' }),
    'step a.expression: JSONata expression does not parse',
  ],
  [
    'transform expression empty',
    withSteps({ id: 'a', kind: 'transform', expression: '' }),
    'step a.expression must be a non-empty JSONata expression',
  ],
  [
    'llm without model',
    withSteps({ id: 'a', kind: 'llm', messages: [{ role: 'user', content: 'x' }] }),
    'step a.model is required',
  ],
  [
    'llm model not a string',
    withSteps({ id: 'a', kind: 'llm', model: 4, messages: [{ role: 'user', content: 'x' }] }),
    'step a.model must be a non-empty string',
  ],
  [
    'llm messages empty',
    withSteps({ id: 'a', kind: 'llm', model: 'm', messages: [] }),
    'step a.messages must be a non-empty array',
  ],
  [
    'llm bad role',
    withSteps({ id: 'a', kind: 'llm', model: 'm', messages: [{ role: 'robot', content: 'x' }] }),
    'step a.messages[0].role must be one of system, user, assistant',
  ],
  [
    'llm content not a template',
    withSteps({ id: 'a', kind: 'llm', model: 'm', messages: [{ role: 'user', content: '{{#if}}' }] }),
    'step a.messages[0].content: template does not parse',
  ],
  [
    'llm message extra field',
    withSteps({ id: 'a', kind: 'llm', model: 'm', messages: [{ role: 'user', content: 'x', name: 'n' }] }),
    'Unknown field: step a.messages[0].name',
  ],
  [
    'llm temperature too high',
    withSteps({ id: 'a', kind: 'llm', model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: 2.5 }),
    'step a.temperature must be a number from 0 to 2',
  ],
  [
    'llm temperature not a number',
    withSteps({ id: 'a', kind: 'llm', model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: 'hot' }),
    'step a.temperature',
  ],
  [
    'llm max_tokens zero',
    withSteps({ id: 'a', kind: 'llm', model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 0 }),
    'step a.max_tokens must be a positive integer',
  ],
  [
    'llm max_tokens fractional',
    withSteps({ id: 'a', kind: 'llm', model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 1.5 }),
    'step a.max_tokens must be a positive integer',
  ],
  [
    'http bad method',
    withSteps({ id: 'a', kind: 'http', method: 'FETCH', url: 'http://x' }),
    'step a.method must be one of GET, POST, PUT, PATCH, DELETE, HEAD',
  ],
  ['http url missing', withSteps({ id: 'a', kind: 'http', method: 'GET' }), 'step a.url is required'],
  [
    'http url not a template',
    withSteps({ id: 'a', kind: 'http', method: 'GET', url: '{{' }),
    'step a.url: template does not parse',
  ],
  [
    'http headers not an object',
    withSteps({ id: 'a', kind: 'http', method: 'GET', url: 'http://x', headers: ['a'] }),
    'step a.headers must be an object of string templates',
  ],
  [
    'http header not a string',
    withSteps({ id: 'a', kind: 'http', method: 'GET', url: 'http://x', headers: { 'x-n': 1 } }),
    'step a.headers.x-n must be a string template',
  ],
  [
    'http body leaf not a template',
    withSteps({ id: 'a', kind: 'http', method: 'POST', url: 'http://x', body: { q: ['{{#each}}'] } }),
    'step a.body.q[0]: template does not parse',
  ],
  ['circuit step without circuit_uid', withSteps({ id: 'a', kind: 'circuit' }), 'step a.circuit_uid is required'],
  [
    'circuit step naming no circuit',
    withSteps({ id: 'a', kind: 'circuit', circuit_uid: '00000000-0000-4000-8000-000000000000' }),
    'step a.circuit_uid does not name a circuit you may run',
  ],
  [
    'circuit step with a malformed uid',
    withSteps({ id: 'a', kind: 'circuit', circuit_uid: 'abc' }),
    'step a.circuit_uid does not name a circuit you may run',
  ],
  [
    'circuit step input leaf not a template',
    withSteps({ id: 'a', kind: 'circuit', circuit_uid: '00000000-0000-4000-8000-000000000000', input: { n: '{{' } }),
    'step a.input.n: template does not parse',
  ],
  ['blob step without blob_uid', withSteps({ id: 'a', kind: 'blob' }), 'step a.blob_uid is required'],
  [
    'blob_uid not a template',
    withSteps({ id: 'a', kind: 'blob', blob_uid: '{{/x}}' }),
    'step a.blob_uid: template does not parse',
  ],
  [
    'retry not an object',
    withSteps({ id: 'a', kind: 'http', method: 'GET', url: 'http://x', retry: 3 }),
    'step a.retry must be an object with max_attempts, initial_backoff_ms, max_backoff_ms',
  ],
  [
    'retry with an unknown field',
    withSteps({ id: 'a', kind: 'http', method: 'GET', url: 'http://x', retry: { attempts: 3 } }),
    'Unknown field: step a.retry.attempts (allowed: max_attempts, initial_backoff_ms, max_backoff_ms)',
  ],
  [
    'retry.max_attempts 0',
    withSteps({ id: 'a', kind: 'http', method: 'GET', url: 'http://x', retry: { max_attempts: 0 } }),
    'step a.retry.max_attempts must be an integer from 1 to 10',
  ],
  [
    'retry.max_attempts 11',
    withSteps({
      id: 'a',
      kind: 'llm',
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      retry: { max_attempts: 11 },
    }),
    'step a.retry.max_attempts must be an integer from 1 to 10',
  ],
  [
    'retry.max_attempts fractional',
    withSteps({ id: 'a', kind: 'http', method: 'GET', url: 'http://x', retry: { max_attempts: 1.5 } }),
    'step a.retry.max_attempts must be an integer from 1 to 10',
  ],
  [
    'retry.initial_backoff_ms 99',
    withSteps({ id: 'a', kind: 'http', method: 'GET', url: 'http://x', retry: { initial_backoff_ms: 99 } }),
    'step a.retry.initial_backoff_ms must be an integer from 100 to 60000',
  ],
  [
    'retry.initial_backoff_ms 60001',
    withSteps({ id: 'a', kind: 'http', method: 'GET', url: 'http://x', retry: { initial_backoff_ms: 60001 } }),
    'step a.retry.initial_backoff_ms must be an integer from 100 to 60000',
  ],
  [
    'retry.max_backoff_ms 600001',
    withSteps({
      id: 'a',
      kind: 'circuit',
      circuit_uid: '00000000-0000-4000-8000-000000000000',
      retry: { max_backoff_ms: 600001 },
    }),
    'step a.retry.max_backoff_ms must be an integer from 100 to 600000',
  ],
  [
    'timeout_ms 99',
    withSteps({ id: 'a', kind: 'http', method: 'GET', url: 'http://x', timeout_ms: 99 }),
    'step a.timeout_ms must be an integer from 100 to 600000',
  ],
  [
    'timeout_ms 600001',
    withSteps({ id: 'a', kind: 'llm', model: 'm', messages: [{ role: 'user', content: 'x' }], timeout_ms: 600001 }),
    'step a.timeout_ms must be an integer from 100 to 600000',
  ],
  [
    'timeout_ms not a number',
    withSteps({ id: 'a', kind: 'circuit', circuit_uid: '00000000-0000-4000-8000-000000000000', timeout_ms: '5s' }),
    'step a.timeout_ms must be an integer from 100 to 600000',
  ],
  [
    'retry on a step kind without a policy',
    withSteps({ ...tpl('a'), retry: { max_attempts: 2 } }),
    'Unknown field: step a.retry',
  ],
  ['reference to a missing step', withSteps(tpl('a', '{{steps.nope.output}}')), 'step a: references steps.nope'],
  ['reference to itself', withSteps(tpl('a', '{{steps.a.output}}')), 'step a: a step may not reference its own output'],
  [
    'a cycle of steps',
    withSteps(tpl('a', '{{steps.b.output}}'), tpl('b', '{{steps.c.output}}'), {
      id: 'c',
      kind: 'transform',
      expression: 'steps.a.output',
    }),
    'the steps form a cycle: a -> b -> c -> a',
  ],
  [
    'output that does not parse',
    { ...withSteps(tpl('a')), output: 'steps.a.output +' },
    'definition.output: JSONata expression does not parse',
  ],
  [
    'output not a string',
    { ...withSteps(tpl('a')), output: 5 },
    'definition.output must be a non-empty JSONata expression',
  ],
  [
    'output referencing a missing step',
    { ...withSteps(tpl('a')), output: 'steps.b.output' },
    'definition.output references steps.b',
  ],
  ['too many steps', withSteps(...Array.from({ length: 101 }, (_, i) => tpl(`s${i}`))), 'at most 100 steps'],
];

test.each(INVALID)('rejects a definition with %s', async (_what, definition, fragment) => {
  const res = await publish(definition);
  expect(res.code).toBe('BadClientData');
  expect(res.errors![0].message).toContain(fragment);
  expect(res.data).toBeNull();
});

test('a rejected definition publishes nothing', async () => {
  const res = await publish(withSteps(tpl('a', '{{')));
  expect(res.code).toBe('BadClientData');
  const versions = await t.gql(
    `query($uid: ID!) { circuitVersions(circuitUid: $uid) { totalCount } }`,
    { uid: circuitUid },
    owner.token,
  );
  expect(versions.data.circuitVersions.totalCount).toBe(0);
});

test('accepts every step kind with all optional fields', async () => {
  const other = await makeUser();
  const { circuit: embedded, version } = await makeCircuit(other);
  const definition = {
    description: 'all kinds',
    query_schema: { type: 'object', properties: { name: { type: 'string', format: 'email' } }, required: ['name'] },
    steps: [
      tpl('t', 'Hello {{input.name}}'),
      { id: 'x', kind: 'transform', expression: '$uppercase(steps.t.output)' },
      {
        id: 'l',
        kind: 'llm',
        model: 'gpt',
        messages: [
          { role: 'system', content: 'be nice' },
          { role: 'user', content: '{{steps.x.output}}' },
        ],
        temperature: 0.5,
        max_tokens: 20,
        retry: { max_attempts: 10, initial_backoff_ms: 100, max_backoff_ms: 600000 },
        timeout_ms: 600000,
      },
      {
        id: 'h',
        kind: 'http',
        method: 'POST',
        url: 'http://127.0.0.1/{{input.name}}',
        headers: { 'x-a': '{{steps.l.output}}' },
        body: { a: ['{{input.name}}', 1, null], b: { c: true } },
        retry: { max_attempts: 1, initial_backoff_ms: 60000, max_backoff_ms: 100 },
        timeout_ms: 100,
      },
      {
        id: 'c',
        kind: 'circuit',
        circuit_uid: embedded.uid,
        version_uid: version!.uid,
        input: { name: '{{steps.t.output}}' },
        retry: { max_attempts: 2 },
        timeout_ms: 5000,
      },
      { id: 'b', kind: 'blob', blob_uid: '{{input.name}}' },
    ],
    output: '{"greeting": steps.x.output, "inner": steps.c.output}',
  };
  const { circuit } = await makeCircuit(owner, {}, null);
  const res = await publish(definition, circuit.uid);
  expect(res.errors).toBeUndefined();
  expect(res.data.publishCircuitVersion).toMatchObject({ number: 1, isPrimary: true });
  const embeds = await CircuitEmbed.findAll({ where: { circuit_uid: circuit.uid } });
  expect(embeds.map((e) => e.embedded_circuit_uid)).toEqual([embedded.uid]);
});

test('a query_schema with an $id can be published again and both versions take input (compile checks leave no state behind)', async () => {
  const definition = {
    query_schema: {
      $id: 'https://example.test/q',
      type: 'object',
      properties: { a: { type: 'string', format: 'date' } },
    },
    steps: [tpl('a')],
  };
  const { circuit } = await makeCircuit(owner, {}, null);
  const versions: string[] = [];
  for (let i = 0; i < 2; i++) {
    const res = await publish(definition, circuit.uid);
    expect(res.errors).toBeUndefined();
    versions.push(res.data.publishCircuitVersion.uid);
  }
  const adaptor = (
    await t.gql(`query($uid: ID!) { circuit(uid: $uid) { adaptorUid } }`, { uid: circuit.uid }, owner.token)
  ).data.circuit.adaptorUid;
  for (const version of versions) {
    const ok = await t.rest('POST', `/circuit-adaptors/${adaptor}/query`, {
      token: owner.token,
      body: { input: { a: '2024-01-31' }, context: { version } },
    });
    expect(ok.status).toBe(200);
    const bad = await t.rest('POST', `/circuit-adaptors/${adaptor}/query`, {
      token: owner.token,
      body: { input: { a: 'soon' }, context: { version } },
    });
    expect([bad.status, bad.body.error.message]).toEqual([400, 'input.a must be a date']);
  }
});

test('a circuit step must name a circuit the publisher may run, and a version of it', async () => {
  const other = await makeUser();
  const { circuit: priv } = await makeCircuit(other, { isPrivate: true });
  const { circuit: pub } = await makeCircuit(other);
  const { version: foreignVersion } = await makeCircuit(other);
  let res = await publish(embeddingDefinition(priv.uid));
  expect(res.code).toBe('BadClientData');
  expect(res.errors![0].message).toContain('step inner.circuit_uid does not name a circuit you may run');
  res = await publish(embeddingDefinition(pub.uid, foreignVersion!.uid));
  expect(res.code).toBe('BadClientData');
  expect(res.errors![0].message).toContain(`step inner.version_uid is not a version of circuit ${pub.name}`);
});

test('embeds are distinct and may not loop, directly or through other circuits', async () => {
  const { circuit: a } = await makeCircuit(owner, {}, null);
  // a embeds itself
  let res = await publish(embeddingDefinition(a.uid), a.uid);
  expect(res.code).toBe('BadClientData');
  expect(res.errors![0].message).toContain('step inner: a circuit may not embed itself');

  // c → b → a; then a → c would close the loop
  const b = await makeEmbeddingCircuit(owner, a);
  const c = await makeEmbeddingCircuit(owner, b);
  res = await publish(embeddingDefinition(c.uid), a.uid);
  expect(res.code).toBe('BadClientData');
  expect(res.errors![0].message).toContain('embedding would form a cycle');
  res = await publish(embeddingDefinition(b.uid), a.uid);
  expect(res.code).toBe('BadClientData');

  // two steps embedding the same circuit give one embeds row
  const { circuit: d } = await makeCircuit(owner, {}, null);
  const twice = withSteps(
    { id: 'one', kind: 'circuit', circuit_uid: a.uid },
    { id: 'two', kind: 'circuit', circuit_uid: a.uid },
  );
  res = await publish(twice, d.uid);
  expect(res.errors).toBeUndefined();
  expect(await CircuitEmbed.count({ where: { circuit_uid: d.uid } })).toBe(1);
});
