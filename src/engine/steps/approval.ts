import { renderTemplate, templateFailure } from '../render';
import type { ApprovalDecision } from '../run-control';
import { templateField } from './field-schemas';
import { defineStepKind, sandboxCall, StepError, templateScope } from './types';

export const APPROVAL_DEFAULT_TIMEOUT_S = 86_400;
export const APPROVAL_MAX_TIMEOUT_S = 604_800;
export const APPROVAL_ON_TIMEOUT = ['reject', 'approve'] as const;

/**
 * `approval` (docs/runs.md, Approvals): the run waits for a person. The rendered prompt is shown to the run's
 * owner (`waiting_for`, a `waiting` step event); the owner approves or rejects through the approvals
 * endpoint, or `on_timeout` decides after `timeout_s`. Waiting holds no connection, sandbox or CPU,
 * survives the worker's death (the run's journal keeps it), and does not count towards the deadline.
 * Approved: the output is the decision. Rejected: the run ends EXCEPTION Rejected (ApprovalTimedOut
 * when the timeout rejected it). Costs nothing.
 */
export const approvalStep = defineStepKind({
  kind: 'approval',
  summary:
    "Waits for the run's owner, or whoever opens its decision URL, to approve or reject; the output is the decision. A rejection ends the run. Costs 0 credits.",
  fields: {
    prompt: templateField('What the person is asked.'),
    timeout_s: {
      type: 'integer',
      minimum: 1,
      maximum: APPROVAL_MAX_TIMEOUT_S,
      description: `Seconds to wait for a decision (default ${APPROVAL_DEFAULT_TIMEOUT_S}); the time does not count towards the run's deadline.`,
      'x-message': `must be a whole number of seconds from 1 to ${APPROVAL_MAX_TIMEOUT_S}`,
    },
    on_timeout: {
      enum: [...APPROVAL_ON_TIMEOUT],
      description: 'What a timeout decides (default reject).',
      'x-message': `must be one of ${APPROVAL_ON_TIMEOUT.join(', ')}`,
    },
  },
  required: ['prompt'],
  async execute(step, ctx) {
    if (!ctx.journal) throw new StepError(step.id, 'approval steps cannot wait here', 'Internal');
    const path = `${ctx.path ?? ''}${step.id}`;
    const known = ctx.journal.recorded(path);
    let prompt = known?.prompt;
    if (prompt === undefined) {
      try {
        prompt = await renderTemplate(String(step.prompt), templateScope(ctx), sandboxCall(ctx));
      } catch (error) {
        throw new StepError(step.id, `prompt: ${templateFailure(error)}`);
      }
    }
    const timeoutSeconds = typeof step.timeout_s === 'number' ? step.timeout_s : APPROVAL_DEFAULT_TIMEOUT_S;
    const onTimeout = step.on_timeout === 'approve' ? 'approve' : 'reject';
    const resolved = await ctx.journal.waitFor(
      path,
      'approval',
      { for: 'approval', prompt, timeoutSeconds, onTimeout },
      ctx.signal,
      (entry) => {
        ctx.observer?.step({
          step_id: step.id,
          kind: 'approval',
          status: 'waiting',
          for: 'approval',
          started_at: entry.started_at,
          prompt: entry.prompt,
          expires_at: entry.expires_at,
        });
      },
    );
    const decision = resolved.decision as ApprovalDecision;
    if (!decision.approved) {
      if (decision.timed_out)
        throw new StepError(step.id, `nobody decided within ${timeoutSeconds} s`, 'ApprovalTimedOut');
      throw new StepError(step.id, decision.comment ? `rejected: ${decision.comment}` : 'rejected', 'Rejected');
    }
    return {
      output: { approved: true, comment: decision.comment, data: decision.data, resolved_at: decision.resolved_at },
      credits: 0,
    };
  },
  describe: (step, say) => `Waits for the owner to approve ${say.quote(String(step.prompt))}`,
});
