import { Circuit, CircuitAlias, CircuitVersion, type User } from '../models';
import { badInput, notFound } from '../errors';
import { authorize } from '../policies/authorize';
import { startRunPermits } from '../policies/run.policy';
import { circuitPermits } from '../policies/circuit.policy';
import { isUid } from '../ids';
import { checkInput } from '../engine/input-schema';
import { renderAll, renderLeaves, stringLeaves } from '../engine/render';
import { parseStepPolicy, STEP_POLICY_DEFAULTS } from '../engine/step-policy';
import { creditsForTokens, estimatePromptTokens, LLM_DEFAULT_MAX_TOKENS } from '../engine/steps/llm';
import { EMBEDDED_RUN_BASE_CREDITS, MAX_CIRCUIT_DEPTH } from '../engine/steps/circuit';
import {
  AGENT_DEFAULT_MAX_TURNS,
  agentMaxToolCalls,
  agentTurnTokenBound,
  conversationLimit,
} from '../engine/steps/agent';
import type { CircuitDefinition, StepDefinition } from '../domain/definition';
import type { SandboxCall } from '../sandbox/sandbox';
import { RUN_BASE_CREDITS } from '../credits/holds';
import type { RunDeps } from './ports';
import { circuitOfAdaptor, resolveVersion } from './create-run';

/** What a step (or a run) may be charged, in credits: a sound bound for a run that completes. */
export interface CreditBound {
  min: number;
  max: number;
}
export interface RunEstimate extends CreditBound {
  steps: Record<string, CreditBound>;
}

/** The most steps one estimate looks at (embedded circuits included) before it gives up with 400. */
const MAX_ESTIMATED_STEPS = 10_000;
/** Tokens of a message whose text cannot be known before the run (it reads other steps' outputs). */
const unknownMessageTokens = (maxOutputBytes: number) => estimatePromptTokens([{ content: '' }]) + maxOutputBytes;

/** An input the estimate cannot know (an embedded run's input rendered from step outputs). */
const UNKNOWN = Symbol('unknown input');
type KnownInput = Record<string, unknown> | typeof UNKNOWN;

interface EstimateContext {
  deps: RunDeps;
  viewer: User;
  limits: SandboxCall;
  /** Estimates of embedded versions already made, by version, depth and input. */
  memo: Map<string, Promise<RunEstimate>>;
  visited: { steps: number };
}

function attemptsOf(step: StepDefinition, kind: 'llm' | 'circuit'): number {
  try {
    return parseStepPolicy(step, kind).maxAttempts;
  } catch {
    return STEP_POLICY_DEFAULTS[kind].maxAttempts;
  }
}

/** Whether every text of the step can be rendered now: it reads only the run's input, and that is known. */
function renderableNow(step: StepDefinition, field: string, input: KnownInput): boolean {
  if (input === UNKNOWN) return false;
  // `steps` anywhere (not only `steps.<id>`): a Handlebars block such as {{#with steps}} reads outputs too.
  return !stringLeaves(step[field], field).some(([, text]) => /steps/.test(text));
}

/**
 * An llm step charges creditsForTokens of the tokens all its attempts used, and holds, before each
 * attempt, the credits of the rendered prompt's estimated tokens plus max_tokens (src/engine/steps/llm.ts).
 * Max: every attempt using that much; min: nothing (a step cache hit, a provider that reports no usage).
 */
async function llmBound(step: StepDefinition, input: KnownInput, context: EstimateContext): Promise<CreditBound> {
  const messages = Array.isArray(step.messages) ? (step.messages as { content?: unknown }[]) : [];
  const maxTokens = typeof step.max_tokens === 'number' ? step.max_tokens : LLM_DEFAULT_MAX_TOKENS;
  let promptTokens = messages.length * unknownMessageTokens(context.limits.maxOutputBytes ?? 0);
  if (renderableNow(step, 'messages', input)) {
    try {
      const contents = await renderAll(
        messages.map((m) => String(m.content ?? '')),
        { input, steps: {} },
        context.limits,
      );
      promptTokens = estimatePromptTokens(contents.map((content) => ({ content })));
    } catch {
      // A template that fails fails the step before anything is held.
      return { min: 0, max: 0 };
    }
  }
  return { min: 0, max: creditsForTokens(attemptsOf(step, 'llm') * (promptTokens + maxTokens)) };
}

/**
 * A circuit step charges its base credit once plus what the embedded runs of all its attempts spent;
 * the embedded circuit is estimated on its input when that can be rendered now, else on any input.
 * A circuit the viewer may not run (or that does not exist) fails the step after its base credit.
 */
async function circuitBound(
  step: StepDefinition,
  input: KnownInput,
  depth: number,
  context: EstimateContext,
): Promise<CreditBound> {
  if (depth + 1 > MAX_CIRCUIT_DEPTH) return { min: 0, max: 0 };
  const failing = { min: 0, max: EMBEDDED_RUN_BASE_CREDITS };
  const circuit = isUid(step.circuit_uid) ? await Circuit.findByPk(step.circuit_uid) : null;
  if (!circuit || !circuitPermits(context.viewer, circuit, 'run')) return failing;
  const versionUid = step.version_uid ?? circuit.primary_version_uid;
  const version = isUid(versionUid)
    ? await CircuitVersion.findByPk(versionUid, { attributes: ['uid', 'circuit_uid', 'definition'] })
    : null;
  if (!version || version.circuit_uid !== circuit.uid) return failing;

  let inner: KnownInput = UNKNOWN;
  if (renderableNow(step, 'input', input)) {
    try {
      const rendered = await renderLeaves(step.input ?? {}, { input, steps: {} }, context.limits);
      if (typeof rendered !== 'object' || rendered === null || Array.isArray(rendered)) return failing;
      if (checkInput(context.deps.schemas.inputs, version.uid, version.definition.query_schema, rendered, 'input'))
        return failing;
      inner = rendered as Record<string, unknown>;
    } catch {
      return failing;
    }
  }
  const key = `${version.uid}|${depth + 1}|${inner === UNKNOWN ? '?' : JSON.stringify(inner)}`;
  let embedded = context.memo.get(key);
  if (!embedded) {
    embedded = estimateSteps(version.definition, inner, depth + 1, context);
    context.memo.set(key, embedded);
  }
  const { min, max } = await embedded;
  return { min: EMBEDDED_RUN_BASE_CREDITS + min, max: EMBEDDED_RUN_BASE_CREDITS + attemptsOf(step, 'circuit') * max };
}

/**
 * An agent step (src/engine/steps/agent.ts) takes at most max_turns model turns, each held and charged like
 * an llm call whose prompt is the whole conversation (bounded by the agent's conversation limit), and at
 * most (max_turns - 1) × the calls a turn may ask for tool calls, each costing at most its dearest tool
 * (an http tool: 0; a circuit tool: like a circuit step on any input). Min: nothing (a cache hit, no usage).
 */
async function agentBound(step: StepDefinition, depth: number, context: EstimateContext): Promise<CreditBound> {
  const maxTurns = typeof step.max_turns === 'number' ? step.max_turns : AGENT_DEFAULT_MAX_TURNS;
  const maxTokens = typeof step.max_tokens === 'number' ? step.max_tokens : LLM_DEFAULT_MAX_TOKENS;
  const limit = conversationLimit(context.limits.maxOutputBytes ?? 0);
  const perTurn = creditsForTokens(attemptsOf(step, 'llm') * agentTurnTokenBound(limit, maxTurns, maxTokens));
  let dearestTool = 0;
  const tools = Array.isArray(step.tools)
    ? (step.tools as { circuit_uid?: unknown; version_uid?: unknown; alias?: unknown }[])
    : [];
  for (const tool of tools) {
    if (tool.circuit_uid === undefined) continue;
    let versions: unknown[] = [tool.version_uid];
    if (tool.version_uid === undefined && typeof tool.alias === 'string' && isUid(tool.circuit_uid)) {
      const alias = await CircuitAlias.findOne({ where: { circuit_uid: tool.circuit_uid, name: tool.alias } });
      versions = alias ? alias.routes.map((route) => route.version_uid) : [];
    }
    for (const version of versions) {
      const bound = await circuitBound(
        { id: step.id, kind: 'circuit', circuit_uid: tool.circuit_uid, version_uid: version },
        UNKNOWN,
        depth,
        context,
      );
      dearestTool = Math.max(dearestTool, bound.max);
    }
  }
  return { min: 0, max: maxTurns * perTurn + agentMaxToolCalls(maxTurns) * dearestTool };
}

/** The bounds of a definition's steps (without the run's base credit): every step of a completed run ran. */
async function estimateSteps(
  definition: CircuitDefinition,
  input: KnownInput,
  depth: number,
  context: EstimateContext,
): Promise<RunEstimate> {
  const steps: Record<string, CreditBound> = {};
  let min = 0;
  let max = 0;
  for (const step of definition.steps) {
    if (++context.visited.steps > MAX_ESTIMATED_STEPS)
      throw badInput(`the circuit has more than ${MAX_ESTIMATED_STEPS} steps to estimate, embedded circuits included`, {
        field: 'input',
      });
    const bound =
      step.kind === 'llm'
        ? await llmBound(step, input, context)
        : step.kind === 'circuit'
          ? await circuitBound(step, input, depth, context)
          : step.kind === 'agent'
            ? await agentBound(step, depth, context)
            : { min: 0, max: 0 };
    steps[step.id] = bound;
    min += bound.min;
    max += bound.max;
  }
  return { min, max, steps };
}

export interface EstimateInput {
  adaptorUid: string;
  versionUid?: string | null;
  input: Record<string, unknown>;
}

/**
 * POST /circuit-adaptors/{uid}/estimate (docs/batches-and-budgets.md, Estimates): what a run of this input may cost, as
 * {min, max, steps: {<id>: {min, max}}}; a run that completes costs within [min, max] (the run's base
 * credit included in both), and a query whose max_credits is at least max never ends BudgetExceeded.
 */
export async function estimateRun(deps: RunDeps, viewer: User, input: EstimateInput): Promise<RunEstimate> {
  const circuit = await circuitOfAdaptor(deps.runService, input.adaptorUid);
  if (!circuit) throw notFound('Circuit adaptor');
  const permit = startRunPermits(viewer, circuit, false);
  authorize(viewer, permit.allowed, permit.message);
  const version = await resolveVersion(deps.runService, circuit, input.versionUid);
  const invalid = checkInput(deps.schemas.inputs, version.uid, version.definition.query_schema, input.input);
  if (invalid) throw badInput(invalid.message, { field: invalid.field });
  const { config } = deps;
  const context: EstimateContext = {
    deps,
    viewer,
    limits: {
      sandbox: deps.sandbox,
      cpuMs: config.stepCpuMs,
      memoryMb: config.stepMemoryMb,
      maxOutputBytes: config.runMaxResultBytes,
    },
    memo: new Map(),
    visited: { steps: 0 },
  };
  const estimate = await estimateSteps(version.definition, input.input, 0, context);
  return { min: RUN_BASE_CREDITS + estimate.min, max: RUN_BASE_CREDITS + estimate.max, steps: estimate.steps };
}
