import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import RE2 from 're2';
import { describeSchemaError, fieldPath } from '../schema-errors';
import { countSchemaNodes, MAX_SCHEMA_NODES, type SchemaCompiler } from './schema-compile';

/**
 * RE2 for every JSON Schema `pattern` and `patternProperties`: linear time, so no input can stall the
 * API process on submit (docs/limits.md). RE2 has no lookaround or backreferences; such a pattern fails at
 * publish with the reason.
 */
const re2Engine = Object.assign((pattern: string, flags: string) => new RE2(pattern, flags), { code: 'new RE2' });

/**
 * An Ajv for query schemas (draft 2020-12, RE2 patterns). A schema's `$id` is not registered: each
 * version's schema stands alone, so two versions may carry the same `$id`.
 */
/** Its options are repeated in the compile check's thread (src/engine/schema-compile.ts): change both. */
export function queryAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    strict: false,
    allErrors: false,
    coerceTypes: false,
    useDefaults: false,
    addUsedSchema: false,
    code: { regExp: re2Engine },
  });
  addFormats(ajv);
  return ajv;
}

/** The largest query_schema (JSON characters): validation time grows with schema size times input size. */
export const MAX_QUERY_SCHEMA_CHARS = 64 * 1024;
/** `uniqueItems` compares items pairwise; arrays it applies to must be bounded by `maxItems`. */
export const MAX_UNIQUE_ITEMS = 1000;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The subschema a local `$ref` (`#` or a `#/…` JSON pointer) names in `root`, or undefined. */
function resolveLocalRef(root: Record<string, unknown>, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    node = isObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[part] : undefined;
  }
  return node;
}

/** Local `$ref`s (`#/…` JSON pointers) that lead back to a schema containing them make validation recurse without bound. */
function recursiveRef(root: Record<string, unknown>): string | null {
  const resolve = (ref: string) => resolveLocalRef(root, ref);
  const state = new Map<object, 'visiting' | 'done'>();
  const walk = (node: unknown, depth: number): string | null => {
    if (depth > 64) return 'nests deeper than 64 levels';
    if (Array.isArray(node)) {
      for (const item of node) {
        const found = walk(item, depth + 1);
        if (found) return found;
      }
      return null;
    }
    if (!isObject(node)) return null;
    if (state.get(node) === 'done') return null;
    if (state.get(node) === 'visiting') return 'uses a recursive $ref';
    state.set(node, 'visiting');
    if ('$dynamicRef' in node || '$recursiveRef' in node) return 'uses $dynamicRef, which is not supported';
    if (node.uniqueItems === true && !(typeof node.maxItems === 'number' && node.maxItems <= MAX_UNIQUE_ITEMS)) {
      return `uses uniqueItems without maxItems of at most ${MAX_UNIQUE_ITEMS}`;
    }
    if (typeof node.$ref === 'string') {
      const target = resolve(node.$ref);
      if (target !== undefined) {
        const found = walk(target, depth + 1);
        if (found) return found;
      }
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' || key === 'const' || key === 'enum' || key === 'default' || key === 'examples') continue;
      const found = walk(value, depth + 1);
      if (found) return found;
    }
    state.set(node, 'done');
    return null;
  };
  return walk(root, 0);
}

/**
 * The most subschemas a validation may visit with every `$ref` followed: a small schema whose definitions
 * each refer to the next several times (d0 → 8 × d1 → 64 × d2 …) passes the size bounds yet makes each
 * validation walk millions of subschemas. Ordinary schemas stay far below it.
 */
export const MAX_EXPANDED_SUBSCHEMAS = 20_000;

/** Why a schema (already known not to recurse) expands past MAX_EXPANDED_SUBSCHEMAS through its `$ref`s, or null. */
function expansionProblem(root: Record<string, unknown>): string | null {
  const resolve = (ref: string) => resolveLocalRef(root, ref);
  const sizes = new Map<object, number>();
  const cap = MAX_EXPANDED_SUBSCHEMAS + 1;
  const size = (node: unknown): number => {
    if (!isObject(node) && !Array.isArray(node)) return 0;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    sizes.set(node, cap); // a cycle (refused before this runs) counts as too large
    let total = 1;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'const' || key === 'enum' || key === 'default' || key === 'examples') continue;
      total += key === '$ref' && typeof value === 'string' ? size(resolve(value)) : size(value);
      if (total >= cap) break;
    }
    total = Math.min(total, cap);
    sizes.set(node, total);
    return total;
  };
  return size(root) > MAX_EXPANDED_SUBSCHEMAS
    ? `expands to more than ${MAX_EXPANDED_SUBSCHEMAS} subschemas through its $refs (each validation would walk them all); refer less`
    : null;
}

/** Why a schema is too large to compile at all (JSON size, subschemas), or null: the checks that cost nothing. */
export function schemaSizeProblem(schema: unknown): string | null {
  if (JSON.stringify(schema).length > MAX_QUERY_SCHEMA_CHARS)
    return `is larger than ${MAX_QUERY_SCHEMA_CHARS} characters of JSON`;
  if (countSchemaNodes(schema) > MAX_SCHEMA_NODES)
    return `holds more than ${MAX_SCHEMA_NODES} subschemas (properties, items, oneOf branches, …); make it smaller`;
  return null;
}

/**
 * Why a query schema cannot be accepted, or null: too large, recursive, or not a valid draft 2020-12
 * schema (including patterns RE2 does not take). Size and shape are checked first, on the spot;
 * then it is compiled once off the event loop, within a time limit (src/engine/schema-compile.ts).
 */
export async function querySchemaProblem(
  compiler: SchemaCompiler,
  schema: Record<string, unknown>,
): Promise<string | null> {
  const problem = schemaSizeProblem(schema) ?? recursiveRef(schema) ?? expansionProblem(schema);
  if (problem) return problem;
  return compiler.problemOf(schema);
}

/**
 * Compiled schemas (query or output) by version uid (versions are immutable, so an entry never goes
 * stale), with the Ajv that compiled them: one of each per process, built by the composition
 * (src/engine/json-schemas.ts). The Ajv is created on first use, so a process that validates nothing
 * does not pay for it.
 */
export class CompiledSchemas {
  private ajv: Ajv2020 | undefined;
  private readonly compiled: LRUCache<string, ValidateFunction>;

  constructor(max: number) {
    this.compiled = new LRUCache<string, ValidateFunction>({
      max,
      // Ajv keeps every schema it compiled; without this the cache's bound would not bound memory.
      dispose: (validate) => {
        this.ajv?.removeSchema(validate.schema as object);
      },
    });
  }

  /** The version's validator, compiled on first use; throws why the schema cannot be used. */
  validatorFor(versionUid: string, schema: unknown): ValidateFunction {
    let validate = this.compiled.get(versionUid);
    if (!validate) {
      // A schema published before the size bounds is refused here rather than compiled on the event loop.
      const tooLarge = schemaSizeProblem(schema);
      if (tooLarge) throw new Error(tooLarge);
      this.ajv ??= queryAjv();
      validate = this.ajv.compile(schema as object);
      this.compiled.set(versionUid, validate);
    }
    return validate;
  }
}

/** One readable line naming the failing field, e.g. "input.name is required", "input.age must be integer". */
export function describeInputError(error: ErrorObject, root = 'input'): { field: string; message: string } {
  return describeSchemaError(error, fieldPath(error.instancePath, root), root);
}

/**
 * Checks a run's input against its version's query schema (JSON Schema 2020-12, RE2 patterns).
 * Returns null when it passes, else the first failure, naming the field. A schema published before
 * today's rules that no longer compiles fails the input with the reason rather than the request.
 */
export function checkInput(
  inputs: CompiledSchemas,
  versionUid: string,
  schema: unknown,
  input: unknown,
  root = 'input',
): { field: string; message: string } | null {
  let validate: ValidateFunction;
  try {
    validate = inputs.validatorFor(versionUid, schema);
  } catch (error) {
    return {
      field: 'query_schema',
      message: `this version's query_schema cannot be used: ${(error as Error).message}`,
    };
  }
  try {
    if (validate(input)) return null;
  } catch (error) {
    return {
      field: 'query_schema',
      message: `this version's query_schema cannot be used: ${(error as Error).message}`,
    };
  }
  const first = validate.errors?.[0];
  return first ? describeInputError(first, root) : { field: root, message: `${root} does not match the query schema` };
}
