import { evaluateExpression } from '../expression';
import { StepError, type StepExecutor } from './types';

/** `transform`: a JSONata expression over `{input, steps}`; output is any JSON. */
export const transformStep: StepExecutor = async (step, ctx) => {
  if (typeof step.expression !== 'string') throw new StepError(step.id, 'expression must be a string');
  try {
    return { output: await evaluateExpression(step.expression, { input: ctx.input, steps: ctx.steps }), credits: 0 };
  } catch (error) {
    throw new StepError(step.id, (error as Error).message);
  }
};
