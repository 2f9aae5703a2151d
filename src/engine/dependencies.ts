import { stringLeaves } from './render';
import type { CircuitDefinition, StepDefinition } from '../domain/definition';

const STEP_REFERENCE = /\bsteps\.([A-Za-z_][A-Za-z0-9_]*)/g;

/** The step ids that a text (template or JSONata expression) reads through `steps.<id>`. */
export function referencedSteps(text: string): string[] {
  return [...text.matchAll(STEP_REFERENCE)].map((m) => m[1]);
}

/** The steps a step reads, from every string field it has (templates, expressions, JSON leaves). */
export function stepReferences(step: StepDefinition): Set<string> {
  const refs = new Set<string>();
  for (const [field, value] of Object.entries(step)) {
    if (field === 'id' || field === 'kind') continue;
    for (const [, text] of stringLeaves(value, field)) for (const id of referencedSteps(text)) refs.add(id);
  }
  return refs;
}

/** step id → the step ids it must wait for. Steps with no path between them may run concurrently. */
export function stepDependencies(definition: CircuitDefinition): Map<string, Set<string>> {
  return new Map(definition.steps.map((step) => [step.id, stepReferences(step)]));
}
