import { toTs } from '../src/clients/json-schema-to-ts';
import { circuitModule } from '../src/clients/circuit-module';

/** The JSON Schema → TypeScript conversion behind GET /circuits/{uid}/client.ts. */
test('converts the common keywords', () => {
  expect(toTs({ type: 'string' })).toBe('string');
  expect(toTs({ type: ['integer', 'null'] })).toBe('number | null');
  expect(toTs({ enum: ['a', 1, null] })).toBe('"a" | 1 | null');
  expect(toTs({ const: 'x' })).toBe('"x"');
  expect(toTs({ type: 'array', items: { type: 'string' } })).toBe('string[]');
  expect(toTs({ anyOf: [{ type: 'string' }, { type: 'number' }] })).toBe('string | number');
  expect(toTs({ $ref: '#/$defs/x' })).toBe('unknown');
  expect(toTs({ type: 'object' })).toBe('{\n  [key: string]: unknown;\n}');
  expect(toTs({ type: 'object', additionalProperties: false })).toBe('Record<string, never>');
  expect(
    toTs({
      type: 'object',
      properties: { 'a-b': { type: 'string' }, c: { type: 'number' } },
      required: ['c'],
      additionalProperties: false,
    }),
  ).toBe('{\n  "a-b"?: string;\n  c: number;\n}');
  expect(
    toTs({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'number' } }),
  ).toBe('{\n  a?: string;\n  [key: string]: number | string | undefined;\n}');
});

test('nothing in a schema or a name can break out of a type, a comment or a string', () => {
  const evil = toTs({
    type: 'object',
    properties: { 'x"; process.exit(); "': { type: 'string', description: '*/ process.exit(); /*' } },
    additionalProperties: false,
  });
  expect(evil).toContain('"x\\"; process.exit(); \\""?: string;');
  expect(evil).toContain('/** *\\/ process.exit(); /* */');
  const source = circuitModule({
    apiUrl: 'http://h/api/v1',
    circuitUid: 'c',
    circuitName: 'n\u2028ame */ x',
    adaptorUid: 'a',
    versionUid: 'v',
    versionNumber: 1,
    alias: null,
    querySchema: { type: 'object' },
    outputSchema: undefined,
  });
  expect(source).not.toContain('\u2028');
  expect(source).toContain('export type Output = unknown;');
});
