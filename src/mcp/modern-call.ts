import { inputRequired, type CallToolResult, type InputRequiredResult } from '@modelcontextprotocol/server';
import { limitRunCreation } from '../ratelimit';
import { AppError } from '../errors';
import type { User } from '../models';
import { CircuitRun } from '../models/CircuitRun';
import type { ApiServices } from '../graphql/context';
import { endedRunResult, errorResult } from './call-tool';
import { followRun, type RunFollower } from './follow-run';
import { cancelOwnRun } from './inflight-calls';
import { answerable, answerableRun, deliverAnswers, inputRequestsFor } from './run-input';
import { createdTask } from './modern-tasks';
import type { CircuitTool } from './tools';

/** `signal`: aborted when the client closed the request's stream: MCP's cancel of a 2026-07-28 request. */
export interface ModernCallContext extends RunFollower {
  services: ApiServices;
  viewer: User;
  /** The client declared form elicitation: a wait on a signal or approval is asked as `input_required`. */
  canElicit: boolean;
  /** The client declared the tasks extension: the call answers a task at once. */
  asTask: boolean;
  /** The run a previous round of this call created (its `requestState`), and the answers to that round. */
  requestState?: unknown;
  inputResponses?: Record<string, unknown>;
}

type JsonObject = Record<string, unknown>;

/** Creates the run as any call does (policy, input validation, credits, the run rate limit). */
async function createRun(ctx: ModernCallContext, tool: CircuitTool, args: JsonObject | undefined): Promise<CircuitRun> {
  // The same per-token limit as a REST or GraphQL query (tasks included).
  await limitRunCreation(ctx.services.runRateLimiter, ctx.viewer, {});
  const { run } = await ctx.services.runs.create(ctx.viewer, { adaptorUid: tool.adaptorUid, input: args ?? {} });
  ctx.services.log.debug({ run: run.uid, tool: tool.name, task: ctx.asTask }, 'mcp tool call started a run');
  return run;
}

/**
 * `tools/call` on protocol 2026-07-28 (docs/mcp.md). A first round creates the run; with the tasks
 * extension it answers the task at once, otherwise it follows the run's events (progress when asked)
 * until the run ends — or, when the run waits on a signal or an approval and the client can elicit,
 * answers `input_required` with one elicitation per waiting step and the run's uid as `requestState`.
 * The client's retry carries the answers, delivered as the owner's signals or decisions, and the call
 * follows the same run again. A client that closes the stream cancels the run.
 */
export async function callModernTool(
  ctx: ModernCallContext,
  tool: CircuitTool,
  args: JsonObject | undefined,
): Promise<CallToolResult | InputRequiredResult | ReturnType<typeof createdTask>> {
  const { services, viewer } = ctx;
  let run: CircuitRun;
  const answered = new Set<string>();
  if (ctx.requestState !== undefined) {
    const found = await answerableRun(viewer, ctx.requestState);
    if (!found) return errorResult('NotFound', 'the run this call was following does not exist');
    run = found;
    const outcome = await deliverAnswers(services, run.uid, ctx.inputResponses);
    for (const key of Object.keys(ctx.inputResponses ?? {})) answered.add(key);
    if (outcome.unanswered.length > 0) {
      const reasons = outcome.unanswered.map((item) => item.reason).join('; ');
      return errorResult('Waiting', `the run still waits (${reasons}); answer it later over REST or MCP`, run.uid);
    }
  } else {
    try {
      run = await createRun(ctx, tool, args);
    } catch (error) {
      if (error instanceof AppError) return errorResult(error.code, error.message);
      throw error;
    }
    if (ctx.asTask) return createdTask((await CircuitRun.findByPk(run.uid)) ?? run);
  }

  const runUid = run.uid;
  const { definition, early } = await followRun(services, runUid, run.circuit_version_uid, ctx, async (step) => {
    if (step.status !== 'waiting' || step.for === 'time' || !ctx.canElicit) return undefined;
    // Replayed events name waits that may have ended: what still waits is in the run's steps.
    const [waiting] = await services.runs.waitingSteps([runUid]);
    const open = answerable(waiting ?? []).filter((wait) => !answered.has(`${wait.kind}:${wait.step_id}`));
    return open.length > 0 ? inputRequired({ inputRequests: inputRequestsFor(open), requestState: runUid }) : undefined;
  });
  if (early) return early;
  if (ctx.signal.aborted) {
    await cancelOwnRun(services, viewer, run.uid);
    return errorResult('Canceled', 'the request was cancelled', run.uid);
  }
  return endedRunResult(run.uid, definition);
}
