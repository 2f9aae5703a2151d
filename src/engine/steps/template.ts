import { renderTemplate, templateFailure } from '../render';
import { templateField } from './field-schemas';
import { defineStepKind, sandboxCall, StepError, throughGate, type StepResult, templateScope } from './types';

/** `template`: renders a Handlebars template over `{input, steps}` in the sandbox; output is the string. */
export const templateStep = defineStepKind({
  kind: 'template',
  summary: 'Renders a text template; the output is the rendered string.',
  fields: { template: templateField('The text, e.g. "Hello {{input.name}}".') },
  required: ['template'],
  async execute(step, ctx) {
    const scope = templateScope(ctx);
    const render = async (): Promise<StepResult> => {
      try {
        return { output: await renderTemplate(String(step.template), scope, sandboxCall(ctx)), credits: 0 };
      } catch (error) {
        throw new StepError(step.id, templateFailure(error));
      }
    };
    // Cached only when the step asks (`cache`): the key is the template and the whole scope it renders over.
    return step.cache ? throughGate(ctx, { template: step.template, scope }, render) : render();
  },
  describe: (step, say) => `Fills in the text template ${say.quote(String(step.template))}`,
});
