import type { StepKind } from './steps/registry';

export type { StepKind } from './steps/registry';

/** The body of a circuit version (DESIGN §4); definition-schema.ts publishes its JSON Schema. */
export interface CircuitDefinition {
  query_schema: Record<string, unknown>;
  steps: StepDefinition[];
  /** JSONata over `{input, steps}`; by default the last step's output. */
  output?: string;
  description?: string;
}

export interface StepDefinition {
  id: string;
  kind: StepKind;
  [field: string]: unknown;
}
