import { Circuit, CircuitVersion, User } from '../../models';
import { circuitPermits } from '../../policies/circuit.policy';
import { isUid } from '../../ids';
import { checkInput } from '../input-schema';
import { renderLeaves } from '../render';
import { ExecutionFailure } from '../execution-failure';
import { StepError, type StepExecutor } from './types';

/** How deep embedded circuits may nest (the top-level run is depth 0). */
export const MAX_CIRCUIT_DEPTH = 5;

/**
 * `circuit`: runs another circuit's version inline (`version_uid`, else its primary) on the input
 * leaves rendered over `{input, steps}`, validated against that version's query schema. Output is the
 * embedded run's result_blob; it costs 1 credit plus the embedded steps' credits. The run's user must
 * be allowed to run the embedded circuit.
 */
export const circuitStep: StepExecutor = async (step, ctx) => {
  if (ctx.depth + 1 > MAX_CIRCUIT_DEPTH) throw new StepError(step.id, `embedded circuits nest deeper than ${MAX_CIRCUIT_DEPTH}`);
  const circuit = isUid(step.circuit_uid) ? await Circuit.findByPk(step.circuit_uid) : null;
  if (!circuit) throw new StepError(step.id, `circuit ${String(step.circuit_uid)} does not exist`);
  const user = await User.findByPk(ctx.run.userUid);
  if (!circuitPermits(user, circuit, 'run')) throw new StepError(step.id, `not allowed to run circuit ${circuit.uid}`);
  const versionUid = step.version_uid ?? circuit.primary_version_uid;
  const version = isUid(versionUid) ? await CircuitVersion.findByPk(versionUid) : null;
  if (!version || version.circuit_uid !== circuit.uid) throw new StepError(step.id, `circuit ${circuit.uid} has no version ${String(versionUid ?? '(primary)')}`);

  const input = renderLeaves(step.input ?? {}, { input: ctx.input, steps: ctx.steps });
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new StepError(step.id, 'input must be an object');
  const invalid = checkInput(version.uid, version.definition.query_schema, input, 'input');
  if (invalid) throw new StepError(step.id, `embedded circuit input: ${invalid.message}`);

  try {
    if (!ctx.execute) throw new StepError(step.id, 'embedded circuits run only inside the run executor');
    const result = await ctx.execute(version.definition, input, {
      ...ctx,
      depth: ctx.depth + 1,
      run: { ...ctx.run, circuitUid: circuit.uid, versionUid: version.uid },
    });
    return { output: { output: result.output, steps: result.steps }, credits: 1 + result.credits };
  } catch (error) {
    if (error instanceof ExecutionFailure) throw new StepError(step.id, `embedded circuit ${circuit.name} failed: ${error.message}`);
    throw error;
  }
};
