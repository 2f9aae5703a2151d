/**
 * A JSON Schema (2020-12) as a TypeScript type expression, for the generated circuit client
 * (docs/typed-clients.md). What it cannot express (`$ref`, `not`, conditionals) becomes `unknown`; it never widens a
 * declared type to something that accepts less than the schema does.
 */
import { metadataText } from '../domain/metadata-text';
type Schema = Record<string, unknown> | boolean;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const MAX_DEPTH = 32;

function literal(value: unknown): string {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value) ? JSON.stringify(value) : 'unknown';
}

function key(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

function comment(text: unknown, indent: string): string {
  if (typeof text !== 'string' || !text.trim()) return '';
  return `${indent}/** ${metadataText(text).replace(/\*\//g, '*\\/').replace(/\s+/g, ' ').trim()} */\n`;
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  if (unique.includes('unknown')) return 'unknown';
  return unique.length ? unique.join(' | ') : 'never';
}

function objectType(schema: Record<string, unknown>, indent: string, depth: number): string {
  const properties = (schema.properties && typeof schema.properties === 'object' ? schema.properties : {}) as Record<
    string,
    Schema
  >;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const inner = `${indent}  `;
  const lines: string[] = [];
  const values: string[] = [];
  for (const [name, child] of Object.entries(properties)) {
    const type = toTs(child, inner, depth + 1);
    values.push(type);
    const description = typeof child === 'object' ? child.description : undefined;
    lines.push(`${comment(description, inner)}${inner}${key(name)}${required.has(name) ? '' : '?'}: ${type};`);
  }
  for (const name of required) if (!(name in properties)) lines.push(`${inner}${key(name)}: unknown;`);
  const additional = schema.additionalProperties;
  if (additional !== false && !(schema.unevaluatedProperties === false && additional === undefined)) {
    const rest =
      additional === undefined || additional === true ? 'unknown' : toTs(additional as Schema, inner, depth + 1);
    // An index signature must admit every declared property's type (optional ones: undefined too).
    lines.push(`${inner}[key: string]: ${rest === 'unknown' ? 'unknown' : union([rest, ...values, 'undefined'])};`);
  }
  return lines.length ? `{\n${lines.join('\n')}\n${indent}}` : additional === false ? 'Record<string, never>' : '{}';
}

export function toTs(schema: Schema | undefined, indent = '', depth = 0): string {
  if (schema === undefined || schema === true) return 'unknown';
  if (schema === false) return 'never';
  if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return 'unknown';
  if ('const' in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));
  for (const combinator of ['anyOf', 'oneOf'] as const) {
    const options = schema[combinator];
    if (Array.isArray(options)) return union(options.map((option) => toTs(option as Schema, indent, depth + 1)));
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1 && !schema.type)
    return toTs(schema.allOf[0] as Schema, indent, depth + 1);
  if (schema.$ref !== undefined || schema.not !== undefined || schema.if !== undefined || schema.allOf !== undefined)
    return 'unknown';
  const types = Array.isArray(schema.type)
    ? (schema.type as string[])
    : typeof schema.type === 'string'
      ? [schema.type]
      : [];
  if (types.length === 0) return schema.properties ? objectType(schema, indent, depth) : 'unknown';
  return union(
    types.map((type) => {
      switch (type) {
        case 'string':
          return 'string';
        case 'number':
        case 'integer':
          return 'number';
        case 'boolean':
          return 'boolean';
        case 'null':
          return 'null';
        case 'array': {
          if (Array.isArray(schema.prefixItems) && schema.items === false) {
            return `[${(schema.prefixItems as Schema[]).map((item) => toTs(item, indent, depth + 1)).join(', ')}]`;
          }
          const item = toTs(schema.items as Schema | undefined, indent, depth + 1);
          return /^[A-Za-z_$][\w$]*$/.test(item) ? `${item}[]` : `Array<${item}>`;
        }
        case 'object':
          return objectType(schema, indent, depth);
        default:
          return 'unknown';
      }
    }),
  );
}
