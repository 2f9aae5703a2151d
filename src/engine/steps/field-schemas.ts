import type { FieldSchema } from './types';

/** A string field that is a Handlebars template over `{input, steps}`. */
export function templateField(description: string): FieldSchema {
  return { type: 'string', description: `${description} A Handlebars template over {input, steps}.`, 'x-template': true, 'x-message': 'must be a string template' };
}

/** A JSONata expression over `{input, steps}`. */
export function jsonataField(description: string): FieldSchema {
  return { type: 'string', pattern: '\\S', description: `${description} A JSONata expression over {input, steps}.`, 'x-jsonata': true, 'x-message': 'must be a non-empty JSONata expression' };
}

/** Any JSON value whose string leaves are templates. */
export function templateLeavesField(description: string): FieldSchema {
  return { description: `${description} Any JSON; every string inside is a Handlebars template over {input, steps}.`, 'x-template-leaves': true };
}
