import type OpenAI from 'openai';
import { Circuit, CircuitAlias, CircuitVersion, User } from '../../models';
import { circuitPermits } from '../../policies/circuit.policy';
import { drawPoint, routeAt } from '../../aliases/alias-routes';
import { isUid } from '../../ids';
import type { StepDefinition } from '../../domain/definition';
import { childContext, endSpan, startSpan } from '../../telemetry/tracing';
import { checkInput } from '../input-schema';
import { renderLeaves, templateFailure } from '../render';
import { ExecutionFailure, type ApprovalDecision, type RunErrorCode } from '../run-control';
import { AttemptError, STEP_POLICY_DEFAULTS, withStepPolicy, DEFAULT_INITIAL_BACKOFF_MS } from '../step-policy';
import { EMBEDDED_RUN_BASE_CREDITS, embeddedRunAttributes, MAX_CIRCUIT_DEPTH } from './circuit';
import { attemptRequest, HTTP_METHODS, parseUrl, replyOutput, TargetRefused } from './http';
import { holdCredits, sandboxCall, StepError, templateScope, type RunTally, type StepContext } from './types';

/**
 * The tools of an `agent` step (docs/agents.md): resolving them when the step starts (a circuit tool's
 * version and parameters, an http tool's rendered url and headers) and running one call of one.
 */

/** A tool as the step's definition has it (publishing checked its shape). */
export interface ToolDefinition {
  name: string;
  description?: string;
  circuit_uid?: string;
  version_uid?: string;
  alias?: string;
  input_schema?: Record<string, unknown>;
  http?: { method: string; url: string; headers?: Record<string, string> };
}

/** A tool ready to be offered to the model and called. */
export type ResolvedTool =
  | {
      type: 'circuit';
      name: string;
      definition: OpenAI.ChatCompletionTool;
      circuit: Circuit;
      version: CircuitVersion;
    }
  | {
      type: 'http';
      name: string;
      definition: OpenAI.ChatCompletionTool;
      method: string;
      url: URL;
      headers: Record<string, string>;
      /** The key of its input_schema among the compiled schemas. */
      schemaKey: string;
      schema: Record<string, unknown>;
    };

/** A tool call that failed in a way the model is told about (its result is the error), with what it cost. */
export class ToolFailure extends Error {
  constructor(
    message: string,
    readonly spent = 0,
  ) {
    super(message);
    this.name = 'ToolFailure';
  }
}

/** Failures of an embedded tool run that end the agent's run rather than going back to the model. */
const RUN_ENDING: readonly RunErrorCode[] = ['BudgetExceeded', 'InsufficientCredits', 'Canceled', 'DeadlineExceeded'];

function functionOf(name: string, description: string, parameters: Record<string, unknown>): OpenAI.ChatCompletionTool {
  return {
    type: 'function',
    function: { name, ...(description ? { description } : {}), parameters },
  };
}

/**
 * The version a circuit tool calls: its `version_uid`, else the version its `alias` draws (by weight, the
 * same for the same run and tool), else the circuit's primary version.
 */
async function versionOfTool(tool: ToolDefinition, circuit: Circuit, drawKey: string): Promise<string | null> {
  if (tool.version_uid !== undefined) return tool.version_uid;
  if (tool.alias !== undefined) {
    const alias = await CircuitAlias.findOne({ where: { circuit_uid: circuit.uid, name: tool.alias } });
    return alias ? routeAt(alias.routes, drawPoint(drawKey)).version_uid : null;
  }
  return circuit.primary_version_uid;
}

/**
 * Every tool of the step, resolved: a circuit tool's circuit (which the run's user must be allowed to run)
 * and version, whose query_schema is its parameters and whose circuit's description is its default
 * description; an http tool's url and headers rendered over {input, steps}. A tool that cannot be resolved
 * fails the step: it is the definition's fault, not the model's.
 */
export async function resolveTools(step: StepDefinition, ctx: StepContext, path: string): Promise<ResolvedTool[]> {
  const tools = step.tools as ToolDefinition[];
  const user = tools.some((t) => t.circuit_uid !== undefined) ? await User.findByPk(ctx.run.userUid) : null;
  const resolved: ResolvedTool[] = [];
  for (const tool of tools) {
    const where = `tool ${tool.name}`;
    if (tool.circuit_uid !== undefined) {
      const circuit = isUid(tool.circuit_uid) ? await Circuit.findByPk(tool.circuit_uid) : null;
      if (!circuit) throw new StepError(step.id, `${where}: circuit ${String(tool.circuit_uid)} does not exist`);
      if (!circuitPermits(user, circuit, 'run'))
        throw new StepError(step.id, `${where}: not allowed to run circuit ${circuit.uid}`);
      const versionUid = await versionOfTool(tool, circuit, `${ctx.run.uid}/${path}/${tool.name}`);
      const version = isUid(versionUid) ? await CircuitVersion.findByPk(versionUid) : null;
      if (!version || version.circuit_uid !== circuit.uid) {
        const which = tool.alias !== undefined ? `alias ${tool.alias}` : `version ${String(versionUid ?? '(primary)')}`;
        throw new StepError(step.id, `${where}: circuit ${circuit.uid} has no ${which}`);
      }
      const description = tool.description ?? version.definition.description ?? circuit.description ?? '';
      resolved.push({
        type: 'circuit',
        name: tool.name,
        definition: functionOf(tool.name, description, version.definition.query_schema),
        circuit,
        version,
      });
      continue;
    }
    const http = tool.http!;
    let rendered: { url: string; headers?: Record<string, unknown> };
    try {
      rendered = (await renderLeaves(
        { url: http.url, headers: http.headers },
        templateScope(ctx),
        sandboxCall(ctx),
      )) as typeof rendered;
    } catch (error) {
      throw new StepError(step.id, `${where}: ${templateFailure(error)}`);
    }
    const method = String(http.method).toUpperCase();
    if (!(HTTP_METHODS as readonly string[]).includes(method))
      throw new StepError(step.id, `${where}: method must be one of ${HTTP_METHODS.join(', ')}`);
    let url: URL;
    try {
      url = parseUrl(rendered.url, step.id);
    } catch (error) {
      throw new StepError(step.id, `${where}: ${(error as Error).message}`);
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(rendered.headers ?? {})) headers[name.toLowerCase()] = String(value);
    headers['user-agent'] ??= 'circuit-service';
    const schema = tool.input_schema ?? { type: 'object' };
    resolved.push({
      type: 'http',
      name: tool.name,
      definition: functionOf(tool.name, tool.description ?? '', schema),
      method,
      url,
      headers,
      schemaKey: `${ctx.run.versionUid}#${path}/tools/${tool.name}`,
      schema,
    });
  }
  return resolved;
}

/** Why arguments do not fit the tool's parameters, or null. */
export function argumentsProblem(tool: ResolvedTool, args: Record<string, unknown>, ctx: StepContext): string | null {
  const invalid =
    tool.type === 'circuit'
      ? checkInput(ctx.deps.schemas.inputs, tool.version.uid, tool.version.definition.query_schema, args, 'arguments')
      : checkInput(ctx.deps.schemas.inputs, tool.schemaKey, tool.schema, args, 'arguments');
  return invalid ? invalid.message : null;
}

/** What a tool call sends: everything that decides its result (the cache's and replay's request). */
export function toolRequest(tool: ResolvedTool, args: Record<string, unknown>): unknown {
  return tool.type === 'circuit'
    ? { tool: tool.name, circuit_uid: tool.circuit.uid, version_uid: tool.version.uid, arguments: args }
    : { tool: tool.name, method: tool.method, url: tool.url.href, headers: tool.headers, arguments: args };
}

/** Where and how one call runs. */
export interface CallPlace {
  /** The call's journal path: `<step path>/turn-<n>.call-<key>` (not beneath its turn: a turn's credits are its own, a call's include its embedded run's). */
  path: string;
  /** The agent step's own tally, shared for its steps count; an embedded tool run's outputs are counted apart. */
  tally: RunTally;
}

/**
 * Runs one tool call on arguments that fit its parameters; answers `{result}` with its credits. A failure
 * the model should hear of is a ToolFailure (with what it cost); one that ends the run is a StepError.
 */
export async function runTool(
  step: StepDefinition,
  ctx: StepContext,
  tool: ResolvedTool,
  args: Record<string, unknown>,
  place: CallPlace,
): Promise<{ output: { result: unknown }; credits: number }> {
  if (tool.type === 'http') return runHttpTool(step, ctx, tool, args);
  return runCircuitTool(step, ctx, tool, args, place);
}

async function runHttpTool(
  step: StepDefinition,
  ctx: StepContext,
  tool: Extract<ResolvedTool, { type: 'http' }>,
  args: Record<string, unknown>,
): Promise<{ output: { result: unknown }; credits: number }> {
  const url = new URL(tool.url.href);
  const headers = { ...tool.headers };
  let body: string | undefined;
  if (tool.method === 'GET' || tool.method === 'HEAD') {
    for (const [name, value] of Object.entries(args))
      url.searchParams.append(name, typeof value === 'string' ? value : JSON.stringify(value));
  } else {
    body = JSON.stringify(args);
    headers['content-type'] ??= 'application/json';
  }
  const policy = {
    maxAttempts: 1,
    initialBackoffMs: DEFAULT_INITIAL_BACKOFF_MS,
    maxBackoffMs: DEFAULT_INITIAL_BACKOFF_MS,
    timeoutMs: STEP_POLICY_DEFAULTS.http.timeoutMs,
  };
  try {
    const reply = await withStepPolicy(step, { signal: ctx.signal }, policy, (attempt) =>
      attemptRequest(step.id, ctx, attempt, { method: tool.method, url, headers, body }),
    );
    return { output: { result: replyOutput(reply) }, credits: 0 };
  } catch (error) {
    if (error instanceof TargetRefused) throw new StepError(step.id, `tool ${tool.name}: ${error.message}`);
    if (ctx.signal.aborted) throw error;
    if (error instanceof AttemptError || error instanceof StepError) throw new ToolFailure(error.message);
    throw error;
  }
}

async function runCircuitTool(
  step: StepDefinition,
  ctx: StepContext,
  tool: Extract<ResolvedTool, { type: 'circuit' }>,
  args: Record<string, unknown>,
  place: CallPlace,
): Promise<{ output: { result: unknown }; credits: number }> {
  if (ctx.depth + 1 > MAX_CIRCUIT_DEPTH)
    throw new StepError(step.id, `tool ${tool.name}: embedded circuits nest deeper than ${MAX_CIRCUIT_DEPTH}`);
  if (!ctx.runDefinition) throw new StepError(step.id, 'embedded circuits cannot run here', 'Internal');
  await holdCredits(ctx, step.id, EMBEDDED_RUN_BASE_CREDITS);
  const { circuit, version } = tool;
  const span = ctx.trace
    ? startSpan(
        'circuit.run',
        ctx.trace.context,
        embeddedRunAttributes(ctx.run.uid, place.path, circuit.uid, version.uid),
      )
    : undefined;
  // The embedded run's outputs go back to the model, not into this run's result: they are counted apart
  // (each within the run's result limit), while its steps count towards the run's RUN_MAX_STEPS.
  const shared = place.tally;
  const tally: RunTally = {
    get steps() {
      return shared.steps;
    },
    set steps(value: number) {
      shared.steps = value;
    },
    outputBytes: 0,
  };
  // The embedded run's steps count themselves busy (a run parks only when nothing but waits is in flight);
  // the call counted itself busy until now.
  ctx.journal?.busy(-1);
  try {
    const embedded = await ctx.runDefinition(version.definition, args, {
      deps: ctx.deps,
      signal: ctx.signal,
      budget: ctx.budget,
      tally,
      journal: ctx.journal,
      path: `${place.path}/`,
      depth: ctx.depth + 1,
      run: { ...ctx.run, circuitUid: circuit.uid, versionUid: version.uid },
      gate: ctx.gate,
      ...(span && ctx.trace ? { trace: { ...ctx.trace, context: childContext(ctx.trace.context, span) } } : {}),
    });
    span?.setAttributes({ 'circuit.run.state': 'COMPLETED', 'circuit.run.credits': embedded.credits });
    span?.end();
    return { output: { result: embedded.output }, credits: EMBEDDED_RUN_BASE_CREDITS + embedded.credits };
  } catch (error) {
    if (span) {
      span.setAttribute('circuit.run.state', 'EXCEPTION');
      endSpan(span, error instanceof Error ? error.message : String(error));
    }
    if (!(error instanceof ExecutionFailure) || ctx.signal.aborted) throw error;
    const spent = EMBEDDED_RUN_BASE_CREDITS + error.credits;
    if (RUN_ENDING.includes(error.code) || error.code === 'Internal')
      throw new StepError(step.id, `tool ${tool.name}: ${error.message}`, error.code, spent);
    throw new ToolFailure(`circuit ${circuit.name} failed (${error.code}): ${error.message}`, spent);
  } finally {
    ctx.journal?.busy(1);
  }
}

/** A person's decision on a tool call, as the model hears of a refusal; null when approved. */
export function refusalOf(decision: ApprovalDecision, timeoutSeconds: number): string | null {
  if (decision.approved) return null;
  if (decision.timed_out) return `nobody approved this call within ${timeoutSeconds} s`;
  return decision.comment ? `a person rejected this call: ${decision.comment}` : 'a person rejected this call';
}
