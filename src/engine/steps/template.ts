import { renderTemplate, templateFailure } from '../render';
import { templateField } from './field-schemas';
import { defineStepKind, sandboxLimits, StepError } from './types';

/** `template`: renders a Handlebars template over `{input, steps}` in the sandbox; output is the string. */
export const templateStep = defineStepKind({
  kind: 'template',
  summary: 'Renders a text template; the output is the rendered string.',
  fields: { template: templateField('The text, e.g. "Hello {{input.name}}".') },
  required: ['template'],
  async execute(step, ctx) {
    try {
      return { output: await renderTemplate(String(step.template), { input: ctx.input, steps: ctx.steps }, sandboxLimits(ctx)), credits: 0 };
    } catch (error) {
      throw new StepError(step.id, templateFailure(error));
    }
  },
  describe: (step, say) => `Fills in the text template ${say.quote(String(step.template))}`,
});
