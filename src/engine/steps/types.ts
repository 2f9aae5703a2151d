import type { Services } from '../../services';
import type { CircuitDefinition, StepDefinition } from '../definition';

/** What a step sees: the run's input, the outputs of steps already finished, and the services. */
export interface StepContext {
  input: unknown;
  steps: Record<string, { output: unknown }>;
  run: { uid: string; userUid: string; circuitUid: string; versionUid: string };
  services: Services;
  signal: AbortSignal;
  /** Nesting depth of embedded circuits; the `circuit` step refuses past a limit. */
  depth: number;
  /** Runs an embedded definition: the executor passes itself in, so no step module imports it (no cycle). */
  execute?(definition: CircuitDefinition, input: unknown, context: Omit<StepContext, 'input' | 'steps' | 'execute'>): Promise<{ output: unknown; steps: Record<string, unknown>; credits: number }>;
}

export interface StepResult {
  output: unknown;
  /** Credits this step costs on top of the run's base cost. */
  credits: number;
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
}

/** One module per step kind under src/engine/steps/<kind>.ts exports one of these. */
export type StepExecutor = (step: StepDefinition, ctx: StepContext) => Promise<StepResult>;

/** A failure inside a step: the reason is logged for the owner, never shown to callers (spec 2.1). */
export class StepError extends Error {
  constructor(readonly stepId: string, message: string) {
    super(`step ${stepId}: ${message}`);
  }
}
