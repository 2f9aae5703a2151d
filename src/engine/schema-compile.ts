import { Worker } from 'node:worker_threads';

/**
 * Subschemas (schema objects, wherever they sit: properties, items, oneOf branches, $defs…) one
 * query_schema or output_schema may hold. Ajv's compile time and the size of the function it makes
 * grow with them: a oneOf of 2,000 constants took seconds to compile and overflowed the stack when
 * validating. Counted before anything compiles.
 */
export const MAX_SCHEMA_NODES = 256;
/** A publish's compile check that takes longer is refused: the schema is too costly to use. */
export const SCHEMA_COMPILE_TIMEOUT_MS = 3_000;
/** Compile checks at once in one process; more wait their turn (each is a thread with its own heap). */
const COMPILE_CONCURRENCY = 2;

const SCHEMA_KEYWORDS_WITH_SCHEMA = new Set(['items', 'contains', 'additionalProperties', 'propertyNames', 'not', 'if', 'then', 'else',
  'unevaluatedItems', 'unevaluatedProperties', 'additionalItems', 'contentSchema']);
const SCHEMA_KEYWORDS_WITH_SCHEMAS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_KEYWORDS_WITH_MAP = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/** How many subschemas `schema` holds (itself included); stops counting past `limit`. */
export function countSchemaNodes(schema: unknown, limit = MAX_SCHEMA_NODES): number {
  let count = 0;
  const walk = (node: unknown, depth: number): void => {
    if (count > limit || depth > 128) return;
    if (typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) return;
    count++;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (SCHEMA_KEYWORDS_WITH_SCHEMA.has(key)) walk(value, depth + 1);
      else if (SCHEMA_KEYWORDS_WITH_SCHEMAS.has(key) && Array.isArray(value)) for (const item of value) walk(item, depth + 1);
      else if (SCHEMA_KEYWORDS_WITH_MAP.has(key) && typeof value === 'object' && value !== null) for (const item of Object.values(value)) walk(item, depth + 1);
    }
  };
  walk(schema, 0);
  return count;
}

/**
 * The thread's program: compiles the schema with the options of queryAjv (src/engine/input-schema.ts,
 * kept alike by test/limits.schema-compile.test.ts) and answers null or the compile error. Plain
 * JavaScript evaluated in the thread, with modules resolved here, so it runs from src/ under the
 * tests as from dist/.
 */
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const Ajv2020 = require(workerData.modules.ajv).default;
const addFormats = require(workerData.modules.formats).default;
const RE2 = require(workerData.modules.re2);
const re2Engine = Object.assign((pattern, flags) => new RE2(pattern, flags), { code: 'new RE2' });
const ajv = new Ajv2020({ strict: false, allErrors: false, coerceTypes: false, useDefaults: false, addUsedSchema: false, code: { regExp: re2Engine } });
addFormats(ajv);
try {
  ajv.compile(workerData.schema);
  parentPort.postMessage(null);
} catch (error) {
  parentPort.postMessage(String(error && error.message));
}
`;

let running = 0;
const waiting: (() => void)[] = [];

async function turn(): Promise<() => void> {
  if (running >= COMPILE_CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  return () => {
    running--;
    waiting.shift()?.();
  };
}

/**
 * Compiles a schema off the event loop (a thread of its own), within SCHEMA_COMPILE_TIMEOUT_MS:
 * resolves to null when it compiles, else why not ("is not a valid JSON Schema …" or "takes too long to compile").
 */
export async function compileProblemOffLoop(schema: object): Promise<string | null> {
  const done = await turn();
  try {
    return await new Promise<string | null>((resolve) => {
      const modules = { ajv: require.resolve('ajv/dist/2020'), formats: require.resolve('ajv-formats'), re2: require.resolve('re2') };
      const thread = new Worker(PROGRAM, { eval: true, workerData: { schema, modules }, resourceLimits: { maxOldGenerationSizeMb: 128 } });
      const timer = setTimeout(() => {
        resolve(`takes longer than ${SCHEMA_COMPILE_TIMEOUT_MS} ms to compile; make it smaller`);
        void thread.terminate();
      }, SCHEMA_COMPILE_TIMEOUT_MS);
      thread.once('message', (problem: string | null) => {
        clearTimeout(timer);
        resolve(problem === null ? null : `is not a valid JSON Schema (draft 2020-12): ${problem}`);
        void thread.terminate();
      });
      thread.once('error', (error) => {
        clearTimeout(timer);
        resolve(`cannot be compiled: ${error.message}`);
      });
    });
  } finally {
    done();
  }
}
