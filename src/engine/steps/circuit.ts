import { childContext, endSpan, startSpan } from '../../telemetry/tracing';
import { Circuit, CircuitVersion, User } from '../../models';
import { circuitPermits } from '../../policies/circuit.policy';
import { isUid } from '../../ids';
import { checkInput } from '../input-schema';
import { renderLeaves, templateFailure } from '../render';
import { ExecutionFailure } from '../run-control';
import { AttemptError, formatDuration, parseStepPolicy, withStepPolicy } from '../step-policy';
import { stepPolicyFields, templateLeavesField } from './field-schemas';
import { defineStepKind, holdCredits, sandboxCall, StepError, throughGate, templateScope } from './types';

/** How deep embedded circuits may nest (the top-level run is depth 0). */
export const MAX_CIRCUIT_DEPTH = 5;
/** An embedded run's base cost, held before it starts. */
export const EMBEDDED_RUN_BASE_CREDITS = 1;

/**
 * The span attributes of an embedded run. It has no row of its own: its uid is the run it is part of (whose
 * uid all its steps share, `circuit.run.root.uid`) and the path of the step that runs it, `<run uid>/<path>`.
 */
export function embeddedRunAttributes(rootUid: string, stepPath: string, circuitUid: string, versionUid: string) {
  return {
    'circuit.run.uid': `${rootUid}/${stepPath}`,
    'circuit.run.root.uid': rootUid,
    'circuit.run.embedded': true,
    'circuit.step.id': stepPath,
    'circuit.uid': circuitUid,
    'circuit.version.uid': versionUid,
  };
}

/**
 * `circuit`: runs another circuit's version inline (`version_uid`, else its primary) on the input
 * leaves rendered over `{input, steps}`, validated against that version's query schema. Output is the
 * embedded run's result_blob; it costs 1 credit plus the embedded steps' credits. The run's user must
 * be allowed to run the embedded circuit; the embedded steps count towards this run's budget. With a
 * `retry` policy the embedded run is run again when a step of it gave up on a retryable
 * failure; `timeout_ms` bounds each embedded run (else the run's deadline does). Retried embedded runs
 * pay for the steps they finished; the base credit is held and charged once.
 */
export const circuitStep = defineStepKind({
  kind: 'circuit',
  durable: true,
  summary:
    "Runs another circuit (embeds it); the output is the embedded run's result_blob. Costs 1 credit plus the embedded run's steps.",
  fields: {
    circuit_uid: { type: 'string', description: 'The circuit to run.', 'x-message': 'must be a circuit uid' },
    version_uid: {
      type: 'string',
      description: 'A version of that circuit; its primary version when absent.',
      'x-message': 'must be a version uid',
    },
    input: templateLeavesField("The embedded run's input (checked against that version's query_schema)."),
    ...stepPolicyFields('circuit'),
  },
  required: ['circuit_uid'],
  async execute(step, ctx) {
    if (ctx.depth + 1 > MAX_CIRCUIT_DEPTH)
      throw new StepError(step.id, `embedded circuits nest deeper than ${MAX_CIRCUIT_DEPTH}`);
    if (!ctx.runDefinition) throw new StepError(step.id, 'embedded circuits cannot run here', 'Internal');
    // Held first: a fan-out the balance cannot cover stops here, before any lookup, render or check.
    await holdCredits(ctx, step.id, EMBEDDED_RUN_BASE_CREDITS);
    const circuit = isUid(step.circuit_uid) ? await Circuit.findByPk(step.circuit_uid) : null;
    if (!circuit) throw new StepError(step.id, `circuit ${String(step.circuit_uid)} does not exist`);
    const user = await User.findByPk(ctx.run.userUid);
    if (!circuitPermits(user, circuit, 'run'))
      throw new StepError(step.id, `not allowed to run circuit ${circuit.uid}`);
    const versionUid = step.version_uid ?? circuit.primary_version_uid;
    const version = isUid(versionUid) ? await CircuitVersion.findByPk(versionUid) : null;
    if (!version || version.circuit_uid !== circuit.uid)
      throw new StepError(step.id, `circuit ${circuit.uid} has no version ${String(versionUid ?? '(primary)')}`);

    let input: unknown;
    try {
      input = await renderLeaves(step.input ?? {}, templateScope(ctx), sandboxCall(ctx));
    } catch (error) {
      throw new StepError(step.id, `input: ${templateFailure(error)}`);
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      throw new StepError(step.id, 'input must be an object');
    const invalid = checkInput(ctx.deps.schemas.inputs, version.uid, version.definition.query_schema, input, 'input');
    if (invalid) throw new StepError(step.id, `embedded circuit input: ${invalid.message}`);

    const runDefinition = ctx.runDefinition;
    return throughGate(ctx, { circuit_uid: circuit.uid, version_uid: version.uid, input }, async () => {
      const policy = parseStepPolicy(step, 'circuit');
      // Credits the embedded runs of failed attempts spent (their finished steps): paid whatever happens.
      let spent = 0;
      const result = await withStepPolicy(step, ctx, policy, async (attempt) => {
        const retryableFailures = new Set<string>();
        // The embedded run is a span of its own under this step's.
        const span = ctx.trace
          ? startSpan(
              'circuit.run',
              ctx.trace.context,
              embeddedRunAttributes(ctx.run.uid, `${ctx.path ?? ''}${step.id}`, circuit.uid, version.uid),
            )
          : undefined;
        try {
          const embedded = await runDefinition(version.definition, input, {
            deps: ctx.deps,
            signal: attempt.signal,
            budget: ctx.budget,
            tally: ctx.tally,
            journal: ctx.journal,
            path: `${ctx.path ?? ''}${step.id}/`,
            depth: ctx.depth + 1,
            run: { ...ctx.run, circuitUid: circuit.uid, versionUid: version.uid },
            retryableFailures,
            gate: ctx.gate,
            ...(span && ctx.trace ? { trace: { ...ctx.trace, context: childContext(ctx.trace.context, span) } } : {}),
          });
          span?.setAttributes({ 'circuit.run.state': 'COMPLETED', 'circuit.run.credits': embedded.credits });
          span?.end();
          return embedded;
        } catch (error) {
          if (span) {
            span.setAttribute('circuit.run.state', 'EXCEPTION');
            endSpan(span, error instanceof Error ? error.message : String(error));
          }
          if (!(error instanceof ExecutionFailure)) throw error;
          spent += error.credits;
          if (attempt.timedOut()) {
            throw new AttemptError(
              step.id,
              `embedded circuit ${circuit.name} timed out after ${formatDuration(attempt.timeoutMs!)} (timeout_ms per attempt)`,
              { retryable: true, spent },
            );
          }
          if (error.code !== 'StepFailed') throw new StepError(step.id, error.message, error.code, spent);
          // Worth another attempt when the embedded step that failed gave up on a retryable failure.
          const retryable = !ctx.signal.aborted && error.stepId !== undefined && retryableFailures.has(error.stepId);
          throw new AttemptError(step.id, `embedded circuit ${circuit.name} failed: ${error.message}`, {
            retryable,
            spent,
          });
        }
      });
      return {
        output: { output: result.output, steps: result.steps },
        credits: EMBEDDED_RUN_BASE_CREDITS + spent + result.credits,
      };
    });
  },
  describe: (step, say) => {
    const name = say.nameCircuit(String(step.circuit_uid)) ?? `circuit ${String(step.circuit_uid)}`;
    const version = step.version_uid ? `version ${String(step.version_uid)}` : 'its primary version';
    return `Runs the circuit ${name} (${version}) and takes its result`;
  },
});
