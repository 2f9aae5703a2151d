import type { CircuitDefinition, StepDefinition } from './definition';
import { stepDependencies } from './dependencies';
import { evaluateExpression } from './expression';
import { stepExecutors } from './steps';
import { StepError, type StepContext } from './steps/types';
import { ExecutionFailure } from './execution-failure';

/** What result_blob.steps holds for each step (DESIGN §4). */
export interface StepRecord {
  kind: string;
  output: unknown;
  started_at: string;
  ended_at: string;
  credits: number;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

export interface ExecutionResult {
  output: unknown;
  steps: Record<string, StepRecord>;
  /** Credits of the steps (the run's base cost is added by the caller). */
  credits: number;
}

export { ExecutionFailure };

export type ExecutionContext = Omit<StepContext, 'input' | 'steps' | 'execute'>;

/**
 * Runs a definition's steps, each as soon as the steps it reads (`steps.<id>`) have finished, so
 * independent steps run concurrently. The first failure cancels the rest and rejects with
 * ExecutionFailure. Output: the definition's `output` expression over `{input, steps}`, else the
 * output of the last step.
 */
export async function executeDefinition(definition: CircuitDefinition, input: unknown, context: ExecutionContext): Promise<ExecutionResult> {
  const steps = definition.steps;
  const dependencies = stepDependencies(definition);
  const ids = new Set(steps.map((s) => s.id));
  for (const step of steps) {
    for (const dep of dependencies.get(step.id) ?? []) {
      if (!ids.has(dep)) throw new ExecutionFailure(`step ${step.id} reads steps.${dep}, which does not exist`, 0, step.id);
      if (dep === step.id) throw new ExecutionFailure(`step ${step.id} reads its own output`, 0, step.id);
    }
  }

  const controller = new AbortController();
  const onAbort = () => controller.abort(context.signal.reason);
  if (context.signal.aborted) onAbort();
  else context.signal.addEventListener('abort', onAbort, { once: true });

  const scopeSteps: Record<string, { output: unknown }> = {};
  const records: Record<string, StepRecord> = {};
  let credits = 0;

  try {
    await new Promise<void>((resolve, reject) => {
      const started = new Set<string>();
      let running = 0;
      let finished = 0;
      let failed = false;

      const fail = (error: unknown, stepId?: string) => {
        if (failed) return;
        failed = true;
        controller.abort();
        const message = error instanceof Error ? error.message : String(error);
        reject(new ExecutionFailure(message, credits, error instanceof StepError ? error.stepId : stepId));
      };

      const start = (step: StepDefinition) => {
        started.add(step.id);
        running++;
        const executor = stepExecutors[step.kind];
        const startedAt = new Date();
        const stepContext: StepContext = { ...context, signal: controller.signal, input, steps: scopeSteps, execute: executeDefinition };
        Promise.resolve()
          .then(() => {
            if (!executor) throw new StepError(step.id, `unknown step kind ${String(step.kind)}`);
            return executor(step, stepContext);
          })
          .then((result) => {
            if (failed) return;
            running--;
            finished++;
            credits += result.credits;
            scopeSteps[step.id] = { output: result.output };
            records[step.id] = {
              kind: step.kind,
              output: result.output,
              started_at: startedAt.toISOString(),
              ended_at: new Date().toISOString(),
              credits: result.credits,
              ...(result.usage
                ? { usage: { prompt_tokens: result.usage.promptTokens, completion_tokens: result.usage.completionTokens, total_tokens: result.usage.totalTokens } }
                : {}),
            };
            launch();
          })
          .catch((error: unknown) => fail(error, step.id));
      };

      const launch = () => {
        if (failed) return;
        if (controller.signal.aborted) return fail(new Error('run cancelled'));
        for (const step of steps) {
          if (started.has(step.id)) continue;
          if ([...(dependencies.get(step.id) ?? [])].every((dep) => dep in scopeSteps)) start(step);
        }
        if (finished === steps.length) resolve();
        else if (running === 0) fail(new Error('steps depend on each other in a cycle'));
      };

      launch();
    });
  } finally {
    context.signal.removeEventListener('abort', onAbort);
  }

  let output: unknown;
  try {
    output = definition.output
      ? await evaluateExpression(definition.output, { input, steps: scopeSteps })
      : scopeSteps[steps[steps.length - 1].id]?.output ?? null;
  } catch (error) {
    throw new ExecutionFailure(`output: ${(error as Error).message}`, credits);
  }
  return { output, steps: records, credits };
}
