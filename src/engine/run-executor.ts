import type { CircuitDefinition, StepDefinition } from '../domain/definition';
import { MAX_OUTPUT_DEPTH, nestsDeeperThan } from './output-depth';
import { stepDependencies } from './dependencies';
import { evaluateExpression } from './expression';
import { abortCode, ExecutionFailure, RunSuspended, type RunErrorCode } from './run-control';
import { stepKind } from './steps/registry';
import { childContext, endSpan, startSpan, type Span } from '../telemetry/tracing';
import { GEN_AI_PROVIDER } from '../telemetry/client-spans';
import {
  sandboxCall,
  StepError,
  type ExecutionContext,
  type ExecutionResult,
  type RunTally,
  type StepContext,
  type StepRecord,
  type StepResult,
  type WaitUrls,
} from './steps/types';

export { ExecutionFailure } from './run-control';
export type { ExecutionContext, ExecutionResult, StepRecord } from './steps/types';

/** Where each wait of this level is answered from outside (`waits.<id>`), fixed by the run and the step's path. */
function waitUrlsOf(definition: CircuitDefinition, context: ExecutionContext): Record<string, WaitUrls> {
  const waits: Record<string, WaitUrls> = {};
  const url = context.deps.waitUrl;
  if (!url) return waits;
  for (const step of definition.steps) {
    const path = `${context.path ?? ''}${step.id}`;
    if (step.kind === 'wait' && step.for === 'signal')
      waits[step.id] = { callback_url: url(context.run.uid, path, 'signal') };
    else if (step.kind === 'approval') waits[step.id] = { decision_url: url(context.run.uid, path, 'approval') };
  }
  return waits;
}

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value ?? null) ?? 'null');

/**
 * Executes one step, counted busy in the run's journal meanwhile (a run parks only when every step in
 * flight waits). A `circuit` step is not counted: the steps of the run it embeds are.
 */
async function executeCounted(
  execute: (step: StepDefinition, ctx: StepContext) => Promise<StepResult>,
  step: StepDefinition,
  ctx: StepContext,
) {
  const journal = step.kind === 'circuit' ? undefined : ctx.journal;
  journal?.busy(1);
  try {
    return await execute(step, ctx);
  } finally {
    journal?.busy(-1);
  }
}

/**
 * Runs a definition's steps, each as soon as the steps it reads (`steps.<id>`) have finished, so
 * independent steps run concurrently. The first failure, or the run's signal, stops the rest and
 * rejects with ExecutionFailure (code and a message safe for the owner). Budgets (docs/limits.md): at most
 * `budget.maxSteps` steps over the whole run including embedded runs, a result within
 * `budget.maxResultBytes`, and credits held before a step that costs them. Output: the definition's
 * `output` expression over `{input, steps}`, else the output of the last step.
 */
export async function executeDefinition(
  definition: CircuitDefinition,
  input: unknown,
  context: ExecutionContext,
): Promise<ExecutionResult> {
  const steps = definition.steps;
  const dependencies = stepDependencies(definition);
  const ids = new Set(steps.map((s) => s.id));
  for (const step of steps) {
    for (const dep of dependencies.get(step.id) ?? []) {
      if (!ids.has(dep))
        throw new ExecutionFailure(`step ${step.id} reads steps.${dep}, which does not exist`, 0, step.id);
      if (dep === step.id) throw new ExecutionFailure(`step ${step.id} reads its own output`, 0, step.id);
    }
  }
  const { budget, observer } = context;
  const tally: RunTally = context.tally ?? { steps: 0, outputBytes: 0 };
  const controller = new AbortController();
  const scopeSteps: Record<string, { output: unknown }> = {};
  const waits = waitUrlsOf(definition, context);
  const records: Record<string, StepRecord> = {};
  let credits = 0;
  let onAbort = () => {};

  try {
    await new Promise<void>((resolve, reject) => {
      const started = new Set<string>();
      const running = new Map<string, { kind: string; startedAt: string; span?: Span }>();
      let finished = 0;
      let failed = false;

      const stepEnded = (stepId: string, error: string) => {
        const entry = running.get(stepId);
        if (!entry) return;
        running.delete(stepId);
        const endedAt = new Date().toISOString();
        context.deps.observer.stepEnded(entry.kind, entry.startedAt, endedAt);
        if (entry.span) endSpan(entry.span, error);
        observer?.step({
          step_id: stepId,
          kind: entry.kind,
          status: 'failed',
          started_at: entry.startedAt,
          ended_at: endedAt,
          error,
        });
      };

      const fail = (message: string, code: RunErrorCode, stepId?: string) => {
        if (failed) return;
        failed = true;
        controller.abort();
        if (stepId) stepEnded(stepId, message);
        const inFlight = running.size > 0;
        // A run that parks or is given back goes on later: its steps in flight did not fail.
        if (context.signal.reason instanceof RunSuspended) running.clear();
        for (const id of [...running.keys()])
          stepEnded(
            id,
            code === 'Canceled' || code === 'DeadlineExceeded'
              ? 'stopped: the run ended'
              : 'stopped: another step failed',
          );
        reject(new ExecutionFailure(message, credits, stepId, code, inFlight));
      };

      const stepFailed = (step: StepDefinition, error: unknown) => {
        if (failed) return;
        if (error instanceof StepError) {
          credits += error.spent;
          return fail(`${step.kind} step ${step.id}: ${error.message}`, error.code, step.id);
        }
        context.deps.log.error({ err: error, run: context.run.uid, step: step.id }, 'step failed unexpectedly');
        fail(`${step.kind} step ${step.id}: internal error`, 'Internal', step.id);
      };

      onAbort = () =>
        fail(
          context.signal.reason instanceof Error ? context.signal.reason.message : 'the run was stopped',
          abortCode(context.signal.reason),
        );
      if (context.signal.aborted) return onAbort();
      context.signal.addEventListener('abort', onAbort, { once: true });

      const start = (step: StepDefinition) => {
        started.add(step.id);
        const kind = stepKind(step.kind);
        if (!kind) return stepFailed(step, new StepError(step.id, `unknown step kind ${String(step.kind)}`));
        tally.steps++;
        if (tally.steps > budget.maxSteps) {
          return stepFailed(
            step,
            new StepError(step.id, `the run reached its limit of ${budget.maxSteps} steps (embedded runs included)`),
          );
        }
        // Finished by an earlier attempt of this run (its worker died): its recorded output is reused,
        // with no second upstream call, charge or `started` event (docs/runs.md, Durable steps).
        const path = `${context.path ?? ''}${step.id}`;
        // An approval an earlier attempt left waiting goes on waiting, also without a second `started`.
        const recorded = context.journal?.recorded(path);
        const reused = kind.durable && recorded?.status === 'completed' ? recorded : undefined;
        const startedAt = recorded?.started_at ?? new Date().toISOString();
        // A step span under the run's (or embedded run's) span; the step's own context carries it to an embedded run and http requests.
        const span = context.trace
          ? startSpan('circuit.step', context.trace.context, {
              'circuit.step.id': path,
              'circuit.step.kind': step.kind,
              'circuit.step.attempt': context.trace.attempt,
              ...(reused ? { 'circuit.step.reused': true } : {}),
            })
          : undefined;
        running.set(step.id, { kind: step.kind, startedAt, span });
        if (!recorded) observer?.step({ step_id: step.id, kind: step.kind, status: 'started', started_at: startedAt });
        const stepContext: StepContext = {
          ...context,
          tally,
          signal: controller.signal,
          input,
          steps: scopeSteps,
          runDefinition: executeDefinition,
          stepStartedAt: startedAt,
          waits,
          ...(span && context.trace
            ? { trace: { ...context.trace, context: childContext(context.trace.context, span) } }
            : {}),
        };
        // The step cache and recorded replays answer rendered requests (docs/runs.md, Step cache; Replay and compare).
        const gate = context.gate;
        if (gate)
          stepContext.request = (request, call) =>
            gate.through(
              { step, path, run: context.run, signal: controller.signal, durable: Boolean(kind.durable) },
              request,
              call,
            );
        Promise.resolve()
          .then(() => (reused ? null : executeCounted(kind.execute, step, stepContext)))
          .then(async (result) => {
            if (failed) return;
            const output = reused ? reused.output : result!.output;
            if (!reused && nestsDeeperThan(output, MAX_OUTPUT_DEPTH))
              throw new StepError(step.id, `the output nests deeper than ${MAX_OUTPUT_DEPTH} levels`);
            if (step.kind !== 'circuit') tally.outputBytes += jsonBytes(output); // an embedded run counted its own steps
            if (tally.outputBytes > budget.maxResultBytes) {
              throw new StepError(step.id, `the run's result would be larger than ${budget.maxResultBytes} bytes`);
            }
            const usage = reused
              ? reused.usage
              : result!.usage && {
                  prompt_tokens: result!.usage.promptTokens,
                  completion_tokens: result!.usage.completionTokens,
                  total_tokens: result!.usage.totalTokens,
                };
            const record: StepRecord = {
              kind: step.kind,
              output,
              started_at: startedAt,
              ended_at: reused?.ended_at ?? new Date().toISOString(),
              credits: reused ? reused.credits : result!.credits,
              ...(usage ? { usage } : {}),
              ...(result?.reused === 'cached'
                ? { cached: true }
                : result?.reused === 'replayed'
                  ? { replayed: true }
                  : {}),
            };
            // The run's last step is recorded by the statement that ends the run, a moment later (the
            // output expression and metrics in between have no effect outside): one write less per run.
            const endsTheRun = context.depth === 0 && finished + 1 === steps.length;
            if (kind.durable && !reused && context.journal && !endsTheRun) {
              await context.journal
                .complete(path, record)
                .catch((error: unknown) =>
                  context.deps.log.warn(
                    { err: error, run: context.run.uid, step: path },
                    'could not record a completed step',
                  ),
                );
              if (failed) return;
            }
            running.delete(step.id);
            if (span) {
              span.setAttribute('circuit.step.cached', record.cached === true);
              span.setAttribute('circuit.step.credits', record.credits);
              // An llm step's model calls are CLIENT spans of their own (chat, one per attempt); an agent step is
              // the agent's invocation, its turns' calls and its tool calls spans under it.
              if (step.kind === 'agent') {
                if (typeof step.model === 'string')
                  span.setAttributes({
                    'gen_ai.operation.name': 'invoke_agent',
                    'gen_ai.provider.name': GEN_AI_PROVIDER,
                    'gen_ai.request.model': step.model,
                  });
                if (usage)
                  span.setAttributes({
                    'gen_ai.usage.input_tokens': usage.prompt_tokens,
                    'gen_ai.usage.output_tokens': usage.completion_tokens,
                  });
              }
              endSpan(span);
            }
            finished++;
            credits += record.credits;
            scopeSteps[step.id] = { output };
            records[step.id] = record;
            if (!reused) {
              context.deps.observer.stepEnded(step.kind, startedAt, record.ended_at);
              observer?.step({
                step_id: step.id,
                kind: step.kind,
                status: 'completed',
                started_at: startedAt,
                ended_at: record.ended_at,
                credits: record.credits,
                ...(record.cached ? { cached: true } : {}),
                ...(record.replayed ? { replayed: true } : {}),
              });
            }
            launch();
          })
          .catch((error: unknown) => stepFailed(step, error));
      };

      const launch = () => {
        for (const step of steps) {
          if (failed) return;
          if (started.has(step.id)) continue;
          if ([...(dependencies.get(step.id) ?? [])].every((dep) => dep in scopeSteps)) start(step);
        }
        if (failed) return;
        if (finished === steps.length) resolve();
        else if (running.size === 0) fail('steps depend on each other in a cycle', 'StepFailed');
      };

      launch();
    });
  } finally {
    context.signal.removeEventListener('abort', onAbort);
  }

  let output: unknown;
  try {
    output = definition.output
      ? await evaluateExpression(definition.output, { input, steps: scopeSteps }, sandboxCall(context))
      : (scopeSteps[steps[steps.length - 1].id]?.output ?? null);
  } catch (error) {
    throw new ExecutionFailure(`output: ${(error as Error).message}`, credits);
  }
  if (context.signal.aborted)
    throw new ExecutionFailure('the run was stopped', credits, undefined, abortCode(context.signal.reason));
  if (context.depth === 0 && jsonBytes({ output, steps: records }) > budget.maxResultBytes) {
    throw new ExecutionFailure(`the run's result is larger than ${budget.maxResultBytes} bytes`, credits);
  }
  return { output, steps: records, credits };
}
