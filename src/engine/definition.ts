/** The body of a circuit version (DESIGN §4). */
export interface CircuitDefinition {
  query_schema: Record<string, unknown>;
  steps: StepDefinition[];
  /** JSONata over `{input, steps}`; by default the last step's output. */
  output?: string;
}

export type StepKind = 'template' | 'transform' | 'llm' | 'http' | 'circuit' | 'blob';
export const STEP_KINDS: StepKind[] = ['template', 'transform', 'llm', 'http', 'circuit', 'blob'];

export interface StepDefinition {
  id: string;
  kind: StepKind;
  [field: string]: unknown;
}
