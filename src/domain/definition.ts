/** The body of a circuit version: its query schema, steps and output; src/engine/definition-schema.ts publishes its JSON Schema. */
export interface CircuitDefinition {
  query_schema: Record<string, unknown>;
  steps: StepDefinition[];
  /** JSONata over `{input, steps}`; by default the last step's output. */
  output?: string;
  /** JSON Schema (2020-12) of the run's output; a run whose output fails it ends EXCEPTION OutputContractViolation. */
  output_schema?: Record<string, unknown>;
  description?: string;
}

export interface StepDefinition {
  id: string;
  /**
   * One of STEP_KINDS (src/engine/steps/registry.ts), as validation guarantees; typed as a string because the
   * kinds' own modules take steps, so deriving the union here would make the definition import them.
   */
  kind: string;
  [field: string]: unknown;
}
