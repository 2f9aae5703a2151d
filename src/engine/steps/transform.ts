import { evaluateExpression } from '../expression';
import { jsonataField } from './field-schemas';
import { defineStepKind, sandboxCall, StepError, throughGate, type StepResult, templateScope } from './types';

/** `transform`: a JSONata expression over `{input, steps}`, evaluated in the sandbox; output is any JSON. */
export const transformStep = defineStepKind({
  kind: 'transform',
  summary: 'Computes a JSONata expression; the output is any JSON.',
  fields: { expression: jsonataField('The expression, e.g. "$uppercase(steps.greet.output)".') },
  required: ['expression'],
  async execute(step, ctx) {
    const scope = templateScope(ctx);
    const evaluate = async (): Promise<StepResult> => {
      try {
        return { output: await evaluateExpression(String(step.expression), scope, sandboxCall(ctx)), credits: 0 };
      } catch (error) {
        throw new StepError(step.id, (error as Error).message);
      }
    };
    // Cached only when the step asks (`cache`): the key is the expression and the whole scope it reads.
    return step.cache ? throughGate(ctx, { expression: step.expression, scope }, evaluate) : evaluate();
  },
  describe: (step, say) => `Computes the JSONata expression ${say.quote(String(step.expression))}`,
});
