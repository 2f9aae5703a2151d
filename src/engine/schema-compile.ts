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

const SCHEMA_KEYWORDS_WITH_SCHEMA = new Set([
  'items',
  'contains',
  'additionalProperties',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'additionalItems',
  'contentSchema',
]);
const SCHEMA_KEYWORDS_WITH_SCHEMAS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_KEYWORDS_WITH_MAP = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
]);

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
      else if (SCHEMA_KEYWORDS_WITH_SCHEMAS.has(key) && Array.isArray(value))
        for (const item of value) walk(item, depth + 1);
      else if (SCHEMA_KEYWORDS_WITH_MAP.has(key) && typeof value === 'object' && value !== null)
        for (const item of Object.values(value)) walk(item, depth + 1);
    }
  };
  walk(schema, 0);
  return count;
}

/**
 * The thread's program: compiles each schema it is sent with the options of queryAjv
 * (src/engine/input-schema.ts) and answers null or the compile error. Plain JavaScript evaluated in
 * the thread, with modules resolved here, so it runs from src/ under the tests as from dist/.
 */
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const Ajv2020 = require(workerData.modules.ajv).default;
const addFormats = require(workerData.modules.formats).default;
const RE2 = require(workerData.modules.re2);
const re2Engine = Object.assign((pattern, flags) => new RE2(pattern, flags), { code: 'new RE2' });
parentPort.on('message', (schema) => {
  const ajv = new Ajv2020({ strict: false, allErrors: false, coerceTypes: false, useDefaults: false, addUsedSchema: false, code: { regExp: re2Engine } });
  addFormats(ajv);
  try {
    ajv.compile(schema);
    parentPort.postMessage(null);
  } catch (error) {
    parentPort.postMessage(String(error && error.message));
  }
});
parentPort.postMessage('ready');
`;

/**
 * The compile check's thread and its queue, one per process, built by the composition (src/engine/json-schemas.ts):
 * the thread is started on first use, kept (unref'd), replaced after a compile that ran out of time.
 */
export class SchemaCompiler {
  private thread: Promise<Worker> | undefined;
  /** One compile at a time in the thread; callers queue here. */
  private queue: Promise<unknown> = Promise.resolve();

  private compileThread(): Promise<Worker> {
    return (this.thread ??= new Promise<Worker>((resolve, reject) => {
      const modules = {
        ajv: require.resolve('ajv/dist/2020'),
        formats: require.resolve('ajv-formats'),
        re2: require.resolve('re2'),
      };
      const worker = new Worker(PROGRAM, {
        eval: true,
        workerData: { modules },
        resourceLimits: { maxOldGenerationSizeMb: 256 },
      });
      worker.unref();
      worker.once('message', () => resolve(worker));
      worker.once('error', (error) => {
        this.thread = undefined;
        reject(error);
      });
      worker.once('exit', () => {
        this.thread = undefined;
      });
    }));
  }

  private compileInThread(worker: Worker, schema: object): Promise<string | null> {
    return new Promise<string | null>((resolve) => {
      const timer = setTimeout(() => {
        worker.off('message', answered);
        this.thread = undefined;
        void worker.terminate();
        resolve(`takes longer than ${SCHEMA_COMPILE_TIMEOUT_MS} ms to compile; make it smaller`);
      }, SCHEMA_COMPILE_TIMEOUT_MS);
      function answered(problem: string | null) {
        clearTimeout(timer);
        resolve(problem === null ? null : `is not a valid JSON Schema (draft 2020-12): ${problem}`);
      }
      worker.once('message', answered);
      worker.postMessage(schema);
    });
  }

  /**
   * Compiles a schema off the event loop (in a thread of its own), within SCHEMA_COMPILE_TIMEOUT_MS of
   * the thread taking it up: resolves to null when it compiles, else why not ("is not a valid JSON
   * Schema …", or "takes longer than … to compile").
   */
  problemOf(schema: object): Promise<string | null> {
    const result = this.queue.then(async () => this.compileInThread(await this.compileThread(), schema));
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Ends the thread (at shutdown); a later compile starts another. */
  async close(): Promise<void> {
    const thread = this.thread;
    this.thread = undefined;
    if (thread) await (await thread.catch(() => undefined))?.terminate();
  }
}
