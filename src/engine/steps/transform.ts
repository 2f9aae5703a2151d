import { evaluateExpression } from '../expression';
import { jsonataField } from './field-schemas';
import { defineStepKind, sandboxLimits, StepError } from './types';

/** `transform`: a JSONata expression over `{input, steps}`, evaluated in the sandbox; output is any JSON. */
export const transformStep = defineStepKind({
  kind: 'transform',
  summary: 'Computes a JSONata expression; the output is any JSON.',
  fields: { expression: jsonataField('The expression, e.g. "$uppercase(steps.greet.output)".') },
  required: ['expression'],
  async execute(step, ctx) {
    try {
      return { output: await evaluateExpression(String(step.expression), { input: ctx.input, steps: ctx.steps }, sandboxLimits(ctx)), credits: 0 };
    } catch (error) {
      throw new StepError(step.id, (error as Error).message);
    }
  },
  describe: (step, say) => `Computes the JSONata expression ${say.quote(String(step.expression))}`,
});
