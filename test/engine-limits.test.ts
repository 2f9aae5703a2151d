import { useTestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { CircuitRun } from '../src/models/CircuitRun';
import type { CircuitDefinition } from '../src/domain/definition';

/** Hostile user logic: each attack ends its run StepFailed while the same process keeps answering. */
const t = useTestApp({ stepCpuMs: 400, stepMemoryMb: 32 });
let owner: TestUser;

beforeAll(async () => {
  owner = await makeUser({ credits: 1000 });
});

const anyObject: CircuitDefinition['query_schema'] = { type: 'object' };

/** Submits a run and, while it executes, asks /healthz every 100 ms; returns the run and the slowest answer. */
async function runWhileProbing(definition: CircuitDefinition, input: Record<string, unknown> = {}) {
  const { adaptorUid } = await makeRunnableCircuit(owner, definition);
  const submitted = await submitRun(t, owner.token, adaptorUid, { input });
  expect(submitted.status).toBe(200);
  let slowest = 0;
  let done = false;
  const probing = (async () => {
    while (!done) {
      const started = Date.now();
      const health = await t.http('GET', '/healthz');
      expect(health.status).toBe(200);
      slowest = Math.max(slowest, Date.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  try {
    const run = await waitForRun(t, submitted.body.payload.uid, owner.token, 30_000);
    return { run, slowest, reason: (await CircuitRun.findByPk(run.uid))!.failure_reason as string | null };
  } finally {
    done = true;
    await probing;
  }
}

test('$pad memory bomb: the step fails on the memory ceiling and the process lives on', async () => {
  const { run, slowest, reason } = await runWhileProbing({
    query_schema: anyObject,
    steps: [{ id: 'bomb', kind: 'transform', expression: '$length($pad("", 300000000))' }],
  });
  expect(run.state).toBe('EXCEPTION');
  // Usually the heap ceiling; on a loaded machine the time limit may come first. Either way the step fails.
  expect(reason).toMatch(
    /^transform step bomb: JSONata: the expression (used more than 32 MB of memory|took longer than 400 ms)$/,
  );
  expect(slowest).toBeLessThan(1000);
  const after = await runWhileProbing({
    query_schema: anyObject,
    steps: [{ id: 'ok', kind: 'transform', expression: '1 + 1' }],
  });
  expect(after.run).toMatchObject({ state: 'COMPLETED', result_blob: { output: 2 } });
});

test('a catastrophic JSONata regex stops at STEP_CPU_MS while /healthz answers within 1 s', async () => {
  const { run, slowest, reason } = await runWhileProbing(
    { query_schema: anyObject, steps: [{ id: 'rx', kind: 'transform', expression: '$match(input.s, /^(a+)+$/)' }] },
    { s: `${'a'.repeat(31)}!` },
  );
  expect(run.state).toBe('EXCEPTION');
  expect(reason).toBe('transform step rx: JSONata: the expression took longer than 400 ms');
  expect(slowest).toBeLessThan(1000);
});

test('four nested {{#each}} over 100 items stop at a limit while /healthz answers within 1 s', async () => {
  const template =
    '{{#each input.xs}}{{#each ../input.xs}}{{#each ../../input.xs}}{{#each ../../../input.xs}}abcdefgh{{/each}}{{/each}}{{/each}}{{/each}}';
  const { run, slowest, reason } = await runWhileProbing(
    { query_schema: anyObject, steps: [{ id: 'tpl', kind: 'template', template }] },
    { xs: Array.from({ length: 100 }, (_, i) => i) },
  );
  expect(run.state).toBe('EXCEPTION');
  expect(reason).toMatch(/^template step tpl: template (took longer than 400 ms|used more than 32 MB of memory)$/);
  expect(slowest).toBeLessThan(1000);
});

test('a query_schema pattern is linear time: a catastrophic pattern answers the submit at once', async () => {
  const { adaptorUid } = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } },
    steps: [{ id: 'echo', kind: 'template', template: '{{input.s}}' }],
  });
  // Timed beside the same submit refused for another reason (a number where a string belongs), so what is
  // asserted is the pattern's own cost, not the machine's load: backtracking over 5,000 characters would take
  // far longer than the second allowed on top; a linear-time match takes microseconds.
  const timed = async (s: unknown) => {
    const started = performance.now();
    const answer = await submitRun(t, owner.token, adaptorUid, { input: { s } });
    return { answer, ms: performance.now() - started };
  };
  const control = await timed(5000);
  expect(control.answer.status).toBe(400);
  const { answer: res, ms } = await timed(`${'a'.repeat(5000)}!`);
  expect(ms).toBeLessThan(control.ms + 1000);
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({
    code: 'BadClientData',
    message: expect.stringContaining('input.s must match pattern'),
  });
  const ok = await submitRun(t, owner.token, adaptorUid, { input: { s: 'aaaa' } });
  expect(ok.status).toBe(200);
});

test('publishing refuses query schemas whose validation would not be bounded, and patterns RE2 cannot run', async () => {
  const publish = (query_schema: Record<string, unknown>) =>
    t.gql(
      'mutation($c: ID!, $d: JSON!) { publishCircuitVersion(circuitUid: $c, definition: $d) { uid } }',
      { c: circuit.uid, d: { query_schema, steps: [{ id: 'a', kind: 'template', template: 'x' }] } },
      owner.token,
    );
  const { circuit } = await makeRunnableCircuit(owner, {
    query_schema: anyObject,
    steps: [{ id: 'a', kind: 'template', template: 'x' }],
  });
  const cases: [Record<string, unknown>, string][] = [
    [
      { type: 'object', properties: { s: { type: 'string', pattern: '(?=a)a' } } },
      'definition.query_schema is not a valid JSON Schema',
    ],
    [{ type: 'object', properties: { n: { $ref: '#' } } }, 'definition.query_schema uses a recursive $ref'],
    [{ type: 'object', properties: { xs: { type: 'array', uniqueItems: true } } }, 'uniqueItems without maxItems'],
    [{ type: 'object', description: 'x'.repeat(70_000) }, 'definition.query_schema is larger than'],
  ];
  for (const [schema, fragment] of cases) {
    const res = await publish(schema);
    expect(res.code).toBe('BadClientData');
    expect(res.errors![0].message).toContain(fragment);
  }
  expect(
    (
      await publish({
        type: 'object',
        $defs: { name: { type: 'string', pattern: '^[a-z]+$' } },
        properties: { a: { $ref: '#/$defs/name' }, b: { $ref: '#/$defs/name' } },
      })
    ).errors,
  ).toBeUndefined();
});

test('templates cannot use log or other helpers that reach outside: refused at publish', async () => {
  const { circuit } = await makeRunnableCircuit(owner, {
    query_schema: anyObject,
    steps: [{ id: 'a', kind: 'template', template: 'x' }],
  });
  const res = await t.gql(
    'mutation($c: ID!, $d: JSON!) { publishCircuitVersion(circuitUid: $c, definition: $d) { uid } }',
    {
      c: circuit.uid,
      d: {
        query_schema: anyObject,
        steps: [{ id: 'a', kind: 'template', template: '{{log input.secret level="error"}}' }],
      },
    },
    owner.token,
  );
  expect(res.code).toBe('BadClientData');
  expect(res.errors![0].message).toBe(
    'step a.template: the helper log is not available (helpers: each, if, unless, with, lookup)',
  );
});
