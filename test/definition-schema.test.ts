import Ajv2020 from 'ajv/dist/2020';
import { definitionJsonSchema } from '../src/engine/definition-schema';
import { STEP_KINDS } from '../src/engine/steps/registry';
import { HELLO_DEFINITION } from './support/factories';

const schema = definitionJsonSchema() as {
  properties: { steps: { items: { allOf: { then?: { title: string; description: string } }[] } } };
};

test('the published definition schema is a strict draft 2020-12 schema documenting every step kind', () => {
  const validate = new Ajv2020({ strict: true, strictTypes: false }).compile(schema);
  const documented = schema.properties.steps.items.allOf.flatMap((s) => (s.then ? [s.then.title] : []));
  expect(documented).toEqual(STEP_KINDS);
  for (const kind of schema.properties.steps.items.allOf.flatMap((s) => (s.then ? [s.then] : [])))
    expect(kind.description.length).toBeGreaterThan(20);
  expect(JSON.stringify(schema)).not.toContain('x-message');
  expect(validate(HELLO_DEFINITION)).toBe(true);
  expect(validate({ ...HELLO_DEFINITION, steps: [{ id: 'a', kind: 'http', method: 'FETCH', url: 'x' }] })).toBe(false);
  expect(validate({ ...HELLO_DEFINITION, steps: [{ id: 'a', kind: 'template', template: 'x', extra: 1 }] })).toBe(
    false,
  );
  // Step policies: on http, llm and circuit steps, within their ranges.
  const http = { id: 'a', kind: 'http', method: 'GET', url: 'x' };
  expect(
    validate({
      ...HELLO_DEFINITION,
      steps: [
        { ...http, retry: { max_attempts: 3, initial_backoff_ms: 100, max_backoff_ms: 600000 }, timeout_ms: 100 },
      ],
    }),
  ).toBe(true);
  for (const bad of [
    { retry: { max_attempts: 11 } },
    { retry: { initial_backoff_ms: 50 } },
    { retry: { max_backoff_ms: 600001 } },
    { retry: { other: 1 } },
    { timeout_ms: 600001 },
    { timeout_ms: 99 },
  ]) {
    expect(validate({ ...HELLO_DEFINITION, steps: [{ ...http, ...bad }] })).toBe(false);
  }
  expect(
    validate({ ...HELLO_DEFINITION, steps: [{ id: 'a', kind: 'template', template: 'x', timeout_ms: 1000 }] }),
  ).toBe(false);
  // An agent step's approval_timeout_s: 1–604800 seconds, as an approval step's timeout_s.
  const agent = {
    id: 'a',
    kind: 'agent',
    model: 'm',
    prompt: 'p',
    tools: [{ name: 't', circuit_uid: 'c' }],
    approve_tools: 'all',
  };
  for (const good of [1, 86_400, 604_800])
    expect(validate({ ...HELLO_DEFINITION, steps: [{ ...agent, approval_timeout_s: good }] })).toBe(true);
  for (const bad of [0, 604_801, 'x', 1.5])
    expect(validate({ ...HELLO_DEFINITION, steps: [{ ...agent, approval_timeout_s: bad }] })).toBe(false);
});
