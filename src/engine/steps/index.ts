import type { StepKind } from '../definition';
import type { StepExecutor } from './types';
import { templateStep } from './template';
import { transformStep } from './transform';
import { llmStep } from './llm';
import { httpStep } from './http';
import { circuitStep } from './circuit';
import { blobStep } from './blob';

/** One executor per step kind (DESIGN §4). */
export const stepExecutors: Record<StepKind, StepExecutor> = {
  template: templateStep,
  transform: transformStep,
  llm: llmStep,
  http: httpStep,
  circuit: circuitStep,
  blob: blobStep,
};
