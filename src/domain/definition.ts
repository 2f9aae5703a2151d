/** The body of a circuit version: its query schema, steps and output; src/engine/definition-schema.ts publishes its JSON Schema. */
export interface CircuitDefinition {
  query_schema: Record<string, unknown>;
  steps: StepDefinition[];
  /** JSONata over `{input, steps}`; by default the last step's output. */
  output?: string;
  /** JSON Schema (2020-12) of the run's output; a run whose output fails it ends EXCEPTION OutputContractViolation. */
  output_schema?: Record<string, unknown>;
  description?: string;
  /** At most `limit` runs of the circuit RUNNING per rendered `key` (none: per circuit); docs/runs.md, Concurrency keys. */
  concurrency?: { limit: number; key?: string };
  /** One caller's queries of one rendered `key` within `window_s` collapse into one run; docs/runs.md, Debounce. */
  debounce?: { key: string; window_s: number };
}

/**
 * A key template of `concurrency` or `debounce`: text and bare references to the input (`{{input.customer_id}}`,
 * `tenant-{{input.org.id}}`), no helpers, so that a key is rendered where a query is accepted without the sandbox.
 */
export const FLOW_KEY_TEMPLATE = /^(?:[^{}]|\{\{\s*input(?:\.[A-Za-z_][A-Za-z0-9_]*)+\s*\}\})+$/;
export const MAX_FLOW_KEY_TEMPLATE_CHARS = 256;
/** A rendered key longer than this is stored as `sha256:` and its hash (71 characters). */
export const MAX_FLOW_KEY_CHARS = 128;
/** `concurrency.limit` and `debounce.window_s` bounds. */
export const MAX_CONCURRENCY_LIMIT = 10_000;
export const MAX_DEBOUNCE_WINDOW_SECONDS = 3600;

export interface StepDefinition {
  id: string;
  /**
   * One of STEP_KINDS (src/engine/steps/registry.ts), as validation guarantees; typed as a string because the
   * kinds' own modules take steps, so deriving the union here would make the definition import them.
   */
  kind: string;
  [field: string]: unknown;
}
