import { allStepKinds } from './steps/registry';
import { cacheField } from './steps/field-schemas';
import type { FieldSchema } from './steps/types';
import {
  FLOW_KEY_TEMPLATE,
  MAX_CONCURRENCY_LIMIT,
  MAX_DEBOUNCE_WINDOW_SECONDS,
  MAX_FLOW_KEY_CHARS,
  MAX_FLOW_KEY_TEMPLATE_CHARS,
} from '../domain/definition';

/** Step ids: what `steps.<id>` can reference. */
export const STEP_ID = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const MAX_STEPS = 100;

const STEP_COMMON = {
  id: {
    type: 'string',
    pattern: STEP_ID.source,
    description: 'Unique within the definition; other steps read this one as steps.<id>.',
    'x-message': `must match ${STEP_ID.source} (got {value})`,
  },
  kind: { type: 'string', description: 'The step kind.' },
};

/** Fields every kind accepts after its own: the step cache (docs/runs.md, Step cache). */
const STEP_SHARED = { cache: cacheField() };

function stepSchemas(): FieldSchema[] {
  return allStepKinds().map((kind) => ({
    if: { type: 'object', properties: { kind: { const: kind.kind } }, required: ['kind'] },
    then: {
      title: kind.kind,
      description: kind.summary,
      type: 'object',
      properties: { ...STEP_COMMON, kind: { const: kind.kind }, ...kind.fields, ...STEP_SHARED },
      required: kind.required,
      additionalProperties: false,
      'x-kind': kind.kind,
    },
  }));
}

/**
 * The JSON Schema of a whole circuit definition (docs/circuit-definition.md), annotated for validation: `x-message`
 * words a failure, `x-template`/`x-template-leaves`/`x-jsonata` mark user logic to parse. Built from
 * the step-kind registry; validate-definition compiles it once.
 */
export function annotatedDefinitionSchema(): FieldSchema {
  const kinds = allStepKinds().map((k) => k.kind);
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'Circuit definition',
    description:
      'The body of a circuit version. Templates are Handlebars over {input, steps} (helpers: each, if, unless, with, lookup); expressions are JSONata over {input, steps}. Steps read each other only through steps.<id> and must not form a cycle; independent steps run concurrently.',
    type: 'object',
    'x-message': 'must be a JSON object',
    properties: {
      query_schema: {
        type: 'object',
        description:
          'JSON Schema (draft 2020-12) of a run\'s input; "type" must be "object". Patterns are RE2 regular expressions.',
        'x-message': 'must be a JSON Schema object',
      },
      steps: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_STEPS,
        description: `The steps, 1 to ${MAX_STEPS}. Each has an id and a kind; the kind decides its other fields.`,
        'x-message': { maxItems: `may hold at most ${MAX_STEPS} steps`, '*': 'must be a non-empty array' },
        items: {
          // allOf runs in order: the common fields are checked before the kind's own.
          allOf: [
            {
              type: 'object',
              'x-message': 'must be an object',
              required: ['id', 'kind'],
              properties: {
                id: STEP_COMMON.id,
                kind: {
                  enum: kinds,
                  description: `One of ${kinds.join(', ')}.`,
                  'x-message': `kind must be one of ${kinds.join(', ')}`,
                },
              },
            },
            ...stepSchemas(),
          ],
        },
      },
      output: {
        type: 'string',
        pattern: '\\S',
        description: "JSONata over {input, steps}: the run's output. Absent: the last step's output.",
        'x-jsonata': true,
        'x-message': 'must be a non-empty JSONata expression',
      },
      output_schema: {
        type: 'object',
        description:
          "JSON Schema (draft 2020-12) of the run's output: a run whose output fails it ends EXCEPTION OutputContractViolation naming the field. Patterns are RE2 regular expressions.",
        'x-message': 'must be a JSON Schema object',
      },
      description: { type: 'string', description: 'Free text about this version.', 'x-message': 'must be a string' },
      concurrency: {
        type: 'object',
        description: `Flow control: at most \`limit\` runs of this circuit RUNNING at once per rendered \`key\` (per circuit without one); the rest wait PROVISIONED, started in creation order as slots free. A run waiting on a wait step, an approval or a delayed start holds no slot.`,
        'x-message': 'must be an object {"limit", "key"?}',
        properties: {
          limit: {
            type: 'integer',
            minimum: 1,
            maximum: MAX_CONCURRENCY_LIMIT,
            description: `Runs RUNNING at once per key, 1 to ${MAX_CONCURRENCY_LIMIT}.`,
            'x-message': `must be a whole number from 1 to ${MAX_CONCURRENCY_LIMIT} (got {value})`,
          },
          key: flowKeyField('concurrency'),
        },
        required: ['limit'],
        additionalProperties: false,
      },
      debounce: {
        type: 'object',
        description:
          "Flow control: one caller's queries with the same rendered `key` within `window_s` of the first collapse into one run, which starts at the window's end with the latest input; every caller is answered that run.",
        'x-message': 'must be an object {"key", "window_s"}',
        properties: {
          key: flowKeyField('debounce'),
          window_s: {
            type: 'integer',
            minimum: 1,
            maximum: MAX_DEBOUNCE_WINDOW_SECONDS,
            description: `The window, fixed from a key's first query: 1 to ${MAX_DEBOUNCE_WINDOW_SECONDS} seconds.`,
            'x-message': `must be a whole number of seconds from 1 to ${MAX_DEBOUNCE_WINDOW_SECONDS} (got {value})`,
          },
        },
        required: ['key', 'window_s'],
        additionalProperties: false,
      },
    },
    required: ['query_schema', 'steps'],
    additionalProperties: false,
  };
}

/** `concurrency.key`, `debounce.key`: a key template of text and `{{input.…}}` references (FLOW_KEY_TEMPLATE). */
function flowKeyField(of: 'concurrency' | 'debounce'): FieldSchema {
  return {
    type: 'string',
    minLength: 1,
    maxLength: MAX_FLOW_KEY_TEMPLATE_CHARS,
    pattern: FLOW_KEY_TEMPLATE.source,
    description: `The ${of} key: text and references to the input such as {{input.customer_id}} (no helpers). A value that is an object or array refuses the query (400); a key longer than ${MAX_FLOW_KEY_CHARS} characters is kept as its SHA-256.`,
    'x-message': `must be text and {{input.<field>}} references only, at most ${MAX_FLOW_KEY_TEMPLATE_CHARS} characters (got {value})`,
  };
}

function withoutAnnotations(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutAnnotations);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => !key.startsWith('x-'))
      .map(([key, value]) => [key, withoutAnnotations(value)]),
  );
}

/** The published JSON Schema of the definition format (GET /api/v1/definition-schema.json). */
export function definitionJsonSchema(): object {
  return withoutAnnotations(annotatedDefinitionSchema()) as object;
}
