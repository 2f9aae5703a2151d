/**
 * The definition types live in src/domain/definition.ts, below the models that store them. This
 * re-export remains for src/engine/steps/types.ts and src/runs/ (estimate, step-cache, transitions),
 * left unchanged here; new code imports src/domain/definition.ts, and this file goes once they do.
 */
export type { CircuitDefinition, StepDefinition } from '../domain/definition';
