import { agentStep } from './agent';
import { approvalStep } from './approval';
import { blobStep } from './blob';
import { circuitStep } from './circuit';
import { httpStep } from './http';
import { llmStep } from './llm';
import { templateStep } from './template';
import { transformStep } from './transform';
import { waitStep } from './wait';
import type { StepKindModule } from './types';

/** Every step kind, in the order the definition schema documents them. A new kind: one module, one line here. */
const KINDS = [
  templateStep,
  transformStep,
  llmStep,
  httpStep,
  circuitStep,
  blobStep,
  approvalStep,
  waitStep,
  agentStep,
] as const;

export type StepKind = (typeof KINDS)[number]['kind'];
export const STEP_KINDS: StepKind[] = KINDS.map((k) => k.kind);

const byKind = new Map<string, StepKindModule>(KINDS.map((k) => [k.kind, k]));

/** The module of a step kind, or undefined for a name that is not one. */
export function stepKind(kind: string): StepKindModule | undefined {
  return byKind.get(kind);
}

export function allStepKinds(): readonly StepKindModule[] {
  return KINDS;
}
