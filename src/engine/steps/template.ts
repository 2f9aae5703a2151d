import { renderTemplate } from '../render';
import { StepError, type StepExecutor } from './types';

/** `template`: renders a Handlebars template over `{input, steps}`; output is the string. */
export const templateStep: StepExecutor = async (step, ctx) => {
  if (typeof step.template !== 'string') throw new StepError(step.id, 'template must be a string');
  try {
    return { output: renderTemplate(step.template, { input: ctx.input, steps: ctx.steps }), credits: 0 };
  } catch (error) {
    throw new StepError(step.id, `template failed: ${(error as Error).message}`);
  }
};
