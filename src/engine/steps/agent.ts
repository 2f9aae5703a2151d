import type OpenAI from 'openai';
import type { StepDefinition } from '../../domain/definition';
import { ALIAS_NAME } from '../../aliases/alias-routes';
import { childContext, endSpan, startSpan } from '../../telemetry/tracing';
import { startToolSpan } from '../../telemetry/client-spans';
import { checkInput } from '../input-schema';
import { renderAll, templateFailure } from '../render';
import type { ApprovalDecision, JournalEntry, StepEvent } from '../run-control';
import { modelTurn, turnTokenBound, type AgentReply, type AgentToolCall, type TurnRequest } from './agent-model';
import {
  argumentsProblem,
  refusalOf,
  resolveTools,
  runTool,
  toolRequest,
  ToolFailure,
  type ResolvedTool,
  type ToolDefinition,
} from './agent-tools';
import { APPROVAL_DEFAULT_TIMEOUT_S, APPROVAL_MAX_TIMEOUT_S } from './approval';
import { templateField } from './field-schemas';
import { HTTP_METHODS } from './http';
import { LLM_DEFAULT_MAX_TOKENS } from './llm';
import {
  defineStepKind,
  sandboxCall,
  StepError,
  templateScope,
  type RunTally,
  type StepContext,
  type StepResult,
} from './types';

export const AGENT_MAX_TOOLS = 20;
export const AGENT_MAX_TURNS = 50;
export const AGENT_DEFAULT_MAX_TURNS = 10;
/** The most tool calls one model turn may ask for; more ends the run (the turn is cut off there). */
export const AGENT_MAX_TOOL_CALLS_PER_TURN = 20;
/**
 * The most bytes an agent's conversation may hold (the prompt, the tool definitions, the model's messages,
 * the tool results), and never more than RUN_MAX_RESULT_BYTES. A tool result that does not fit goes back to
 * the model as an error saying so; a reply that does not fit fails the step.
 */
export const AGENT_MAX_CONVERSATION_BYTES = 256 * 1024;
/** A tool error as the model reads it is cut to this many bytes. */
export const AGENT_TOOL_ERROR_BYTES = 2048;
export const AGENT_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** How long an approval of a tool call waits by default (`approval_timeout_s`; then it counts as rejected). */
export const AGENT_APPROVAL_TIMEOUT_S = APPROVAL_DEFAULT_TIMEOUT_S;
/** How much of a tool call's arguments its approval prompt quotes. */
const APPROVAL_ARGUMENT_CHARS = 1000;
/** A model's call id that can name the call in paths (journal, approvals) as it is. */
const CALL_KEY = /^[A-Za-z0-9_-]{1,64}$/;

/** The conversation limit of a run whose result may hold `maxResultBytes`. */
export function conversationLimit(maxResultBytes: number): number {
  return Math.max(0, Math.min(AGENT_MAX_CONVERSATION_BYTES, maxResultBytes));
}

/**
 * A sound bound on one turn's tokens for an agent of `maxTurns` turns whose conversation may hold
 * `limit` bytes: the whole limit, every tool error past it, and the most messages a turn can send.
 */
export function agentTurnTokenBound(limit: number, maxTurns: number, maxTokens: number): number {
  const calls = (maxTurns - 1) * AGENT_MAX_TOOL_CALLS_PER_TURN;
  const messages = 2 + (maxTurns - 1) + calls;
  return turnTokenBound(limit + calls * (AGENT_TOOL_ERROR_BYTES + 16), messages, maxTokens);
}

/** The tool calls an agent of `maxTurns` turns may make at most: the last turn's calls never run. */
export const agentMaxToolCalls = (maxTurns: number): number => (maxTurns - 1) * AGENT_MAX_TOOL_CALLS_PER_TURN;

const bytesOf = (text: string): number => Buffer.byteLength(text);

/** At most `max` bytes of `text`, cut on a character boundary with an ellipsis. */
function cutBytes(text: string, max: number): string {
  if (bytesOf(text) <= max) return text;
  let out = '';
  let size = 0;
  for (const char of text) {
    const bytes = bytesOf(char);
    if (size + bytes > max - 3) break;
    out += char;
    size += bytes;
  }
  return `${out}…`;
}

const cutChars = (text: string, max: number): string => {
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
};

/** What a tool call gave: its result, or the error the model is told. What the journal keeps of a call. */
type CallOutcome = { result: unknown } | { error: string };

/**
 * Publish-time rules the field schemas cannot say (a tool is a circuit tool or an http tool, names are
 * unique, approve_tools names tools, approval_timeout_s comes with approve_tools). Null when the step is
 * well formed, else the field and the sentence.
 */
export function agentStepProblem(step: StepDefinition): { field: string; message: string } | null {
  const tools = Array.isArray(step.tools) ? (step.tools as ToolDefinition[]) : [];
  const names = new Set<string>();
  for (const [i, tool] of tools.entries()) {
    const at = `tools[${i}]`;
    if (names.has(tool.name)) return { field: `${at}.name`, message: `duplicate tool name ${tool.name}` };
    names.add(tool.name);
    const isCircuit = tool.circuit_uid !== undefined;
    if (isCircuit === (tool.http !== undefined))
      return { field: at, message: 'a tool has exactly one of circuit_uid (a circuit tool) and http (an http tool)' };
    if (isCircuit) {
      if (tool.input_schema !== undefined)
        return {
          field: `${at}.input_schema`,
          message: "belongs to an http tool: a circuit tool's parameters are its circuit's query_schema",
        };
      if (tool.version_uid !== undefined && tool.alias !== undefined)
        return { field: `${at}.alias`, message: 'a tool names a version_uid or an alias, not both' };
    } else {
      for (const field of ['version_uid', 'alias'] as const)
        if (tool[field] !== undefined) return { field: `${at}.${field}`, message: 'belongs to a circuit tool' };
      if (tool.description === undefined) return { field: `${at}.description`, message: 'an http tool needs one' };
      if (tool.input_schema === undefined)
        return {
          field: `${at}.input_schema`,
          message: 'an http tool needs one (its arguments are checked against it)',
        };
      if (tool.input_schema.type !== 'object')
        return { field: `${at}.input_schema`, message: 'must describe an object ("type": "object")' };
    }
  }
  const approve = step.approve_tools;
  if (typeof approve === 'string' && approve !== 'all')
    return { field: 'approve_tools', message: 'must be "all" or a list of tool names' };
  if (Array.isArray(approve))
    for (const name of approve as string[])
      if (!names.has(name)) return { field: 'approve_tools', message: `names no tool of this step: ${name}` };
  if (step.approval_timeout_s !== undefined && approve === undefined)
    return { field: 'approval_timeout_s', message: 'applies to approve_tools, which this step does not have' };
  return null;
}

/** The circuits an agent step's tools run (for the embeds list, cycle checks and explain). */
export function agentToolCircuits(step: StepDefinition): string[] {
  if (step.kind !== 'agent' || !Array.isArray(step.tools)) return [];
  return (step.tools as ToolDefinition[])
    .map((tool) => tool.circuit_uid)
    .filter((uid): uid is string => typeof uid === 'string');
}

const TOOL_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  description:
    "A circuit tool ({name, description?, circuit_uid, version_uid? | alias?}: its parameters are that circuit's query_schema, its description by default the circuit's) or an http tool ({name, description, input_schema, http: {method, url, headers?}}: the arguments are the JSON body, or the query string for GET and HEAD).",
  'x-message': 'must be an object with a name and either circuit_uid or http',
  properties: {
    name: {
      type: 'string',
      pattern: AGENT_TOOL_NAME.source,
      description: 'What the model calls the tool.',
      'x-message': `must match ${AGENT_TOOL_NAME.source} (got {value})`,
    },
    description: { type: 'string', description: 'What the tool does, for the model.', 'x-message': 'must be a string' },
    circuit_uid: {
      type: 'string',
      description: 'A circuit tool: the circuit it runs.',
      'x-message': 'must be a circuit uid',
    },
    version_uid: {
      type: 'string',
      description: "A circuit tool: the version it runs (else its alias's draw, else the primary version).",
      'x-message': 'must be a version uid',
    },
    alias: {
      type: 'string',
      pattern: ALIAS_NAME.source,
      description: 'A circuit tool: the alias whose routes choose the version.',
      'x-message': `must be an alias name (${ALIAS_NAME.source})`,
    },
    input_schema: {
      type: 'object',
      description: 'An http tool: the JSON Schema of its arguments (an object), checked before it is called.',
      'x-message': 'must be a JSON Schema object',
    },
    http: {
      type: 'object',
      additionalProperties: false,
      required: ['method', 'url'],
      description: "An http tool: the request, under the http step's guards (public addresses only, 1 MiB, 30 s).",
      'x-message': 'must be an object with method, url and optional headers',
      properties: {
        method: { enum: [...HTTP_METHODS], 'x-message': `must be one of ${HTTP_METHODS.join(', ')}` },
        url: templateField('The http or https URL.'),
        headers: {
          type: 'object',
          description: 'Request headers by name.',
          additionalProperties: templateField('A header value.'),
          'x-message': 'must be an object of string templates',
        },
      },
    },
  },
};

/**
 * `agent` (docs/agents.md): a model that calls tools in a loop. Each turn asks the model (the `llm` step's
 * OpenAI-compatible client, with the tools' definitions); each tool call it answers runs — a circuit tool
 * as an embedded run, charged like a `circuit` step, an http tool under the http step's guards — and its
 * result, or its error as text, goes back to the model, until it answers without tool calls. Output:
 * `{answer, turns, tool_calls}`. Every turn and every call is a durable sub-step (`<step>/turn-<n>`,
 * `<step>/turn-<n>.call-<id>`: never made again after a worker's death, reused by recorded replays, cached
 * with the step's `cache`), announced as `agent_turn`, `tool_call` and `tool_result` step events. Credits are
 * held before each turn and each circuit tool run, so `max_credits` is never crossed (BudgetExceeded).
 */
export const agentStep = defineStepKind({
  kind: 'agent',
  durable: true,
  summary: `Lets a chat model call tools (circuits, http endpoints) in a loop until it answers; the output is {answer, turns, tool_calls}. 1 to ${AGENT_MAX_TOOLS} tools; max_turns 1–${AGENT_MAX_TURNS} (default ${AGENT_DEFAULT_MAX_TURNS}), past it the run ends AgentTurnLimit. Each turn is charged like an llm step, each circuit tool run like a circuit step; approve_tools makes calls wait for a person.`,
  fields: {
    model: {
      type: 'string',
      pattern: '\\S',
      description: 'The model name.',
      'x-message': 'must be a non-empty string',
    },
    system: templateField('The system message.'),
    prompt: templateField("The task: the conversation's first user message."),
    tools: {
      type: 'array',
      minItems: 1,
      maxItems: AGENT_MAX_TOOLS,
      description: `The tools the model may call, 1 to ${AGENT_MAX_TOOLS}, with distinct names.`,
      'x-message': {
        minItems: 'must list at least 1 tool',
        maxItems: `may list at most ${AGENT_MAX_TOOLS} tools`,
        '*': 'must be an array of tools',
      },
      items: TOOL_SCHEMA,
    },
    max_turns: {
      type: 'integer',
      minimum: 1,
      maximum: AGENT_MAX_TURNS,
      description: `The most model calls (default ${AGENT_DEFAULT_MAX_TURNS}); the model still calling tools after them ends the run AgentTurnLimit.`,
      'x-message': `must be an integer from 1 to ${AGENT_MAX_TURNS}`,
    },
    approve_tools: {
      type: ['string', 'array'],
      items: { type: 'string', 'x-message': 'must be a tool name' },
      description:
        'The tools whose calls wait for a person\'s approval ("all", or tool names); a rejection goes back to the model as the tool\'s error.',
      'x-message': 'must be "all" or a list of tool names',
    },
    approval_timeout_s: {
      type: 'integer',
      minimum: 1,
      maximum: APPROVAL_MAX_TIMEOUT_S,
      description: `Seconds an approval of a tool call waits for a decision (default ${AGENT_APPROVAL_TIMEOUT_S}); past it the call counts as rejected and the model is told. The wait does not count towards the run's deadline.`,
      'x-message': `must be a whole number of seconds from 1 to ${APPROVAL_MAX_TIMEOUT_S}`,
    },
    output_schema: {
      type: 'object',
      description:
        'JSON Schema of the final answer: the answer is parsed as JSON and checked (else the run ends OutputContractViolation); the model is told the schema.',
      'x-message': 'must be a JSON Schema object',
    },
    temperature: {
      type: 'number',
      minimum: 0,
      maximum: 2,
      description: 'Sampling temperature.',
      'x-message': 'must be a number from 0 to 2',
    },
    max_tokens: {
      type: 'integer',
      minimum: 1,
      description: `The longest reply of each turn, in tokens (default ${LLM_DEFAULT_MAX_TOKENS}).`,
      'x-message': 'must be a positive integer',
    },
  },
  required: ['model', 'prompt', 'tools'],
  execute: (step, ctx) => new AgentLoop(step, ctx).run(),
  describe: (step, say) => {
    const tools = Array.isArray(step.tools) ? (step.tools as ToolDefinition[]) : [];
    const named = tools.map((tool) =>
      tool.circuit_uid !== undefined
        ? `${tool.name} (the circuit ${say.nameCircuit(tool.circuit_uid) ?? tool.circuit_uid})`
        : `${tool.name} (${String(tool.http?.method)} ${say.quote(String(tool.http?.url))})`,
    );
    const turns = typeof step.max_turns === 'number' ? step.max_turns : AGENT_DEFAULT_MAX_TURNS;
    const approve = step.approve_tools;
    const timeout = typeof step.approval_timeout_s === 'number' ? step.approval_timeout_s : AGENT_APPROVAL_TIMEOUT_S;
    const within = ` (within ${timeout} s, else the call is rejected)`;
    const approval =
      approve === 'all'
        ? `; a person approves every tool call first${within}`
        : Array.isArray(approve) && approve.length > 0
          ? `; a person approves each call of ${(approve as string[]).join(', ')} first${within}`
          : '';
    return `Lets the language model ${String(step.model)} work on ${say.quote(String(step.prompt))} in up to ${turns} turn${turns === 1 ? '' : 's'}, calling the tools ${named.join(', ')}${approval}`;
  },
});

/** One execution of one agent step: its conversation, what it spent, and the sub-steps it journals. */
class AgentLoop {
  private readonly path: string;
  private readonly messages: OpenAI.ChatCompletionMessageParam[] = [];
  /** The conversation's bytes so far (tool definitions included). */
  private bytes = 0;
  private limit = 0;
  private credits = 0;
  private readonly usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  private toolCalls = 0;
  private tools = new Map<string, ResolvedTool>();
  private definitions: OpenAI.ChatCompletionTool[] = [];
  private approve = new Set<string>();
  /** Call keys used so far in this step (journal and approval paths). */
  private readonly keys = new Set<string>();
  private readonly tally: RunTally;

  constructor(
    private readonly step: StepDefinition,
    private readonly ctx: StepContext,
  ) {
    this.path = `${ctx.path ?? ''}${step.id}`;
    this.tally = ctx.tally ?? { steps: 0, outputBytes: 0 };
  }

  async run(): Promise<StepResult> {
    try {
      return await this.loop();
    } catch (error) {
      // What finished turns and calls cost is paid whatever ends the step.
      if (error instanceof StepError)
        throw new StepError(this.step.id, error.message, error.code, this.credits + error.spent);
      throw error;
    }
  }

  private fail(message: string, code: StepError['code'] = 'StepFailed'): StepError {
    return new StepError(this.step.id, message, code);
  }

  private async loop(): Promise<StepResult> {
    const { step, ctx } = this;
    if (typeof step.model !== 'string' || !step.model) throw this.fail('model must be a string');
    if (typeof step.prompt !== 'string') throw this.fail('prompt must be a string');
    if (!Array.isArray(step.tools) || step.tools.length === 0) throw this.fail('tools must be a non-empty array');
    const maxTurns = typeof step.max_turns === 'number' ? step.max_turns : AGENT_DEFAULT_MAX_TURNS;

    let system: string | undefined;
    let prompt: string;
    try {
      const texts = await renderAll(
        typeof step.system === 'string' ? [step.prompt, step.system] : [step.prompt],
        templateScope(ctx),
        sandboxCall(ctx),
      );
      [prompt, system] = texts;
    } catch (error) {
      throw this.fail(templateFailure(error));
    }
    if (step.output_schema !== undefined) {
      const rule = `Your final answer (your message without tool calls) must be JSON only, matching this JSON Schema: ${JSON.stringify(step.output_schema)}`;
      system = system ? `${system}\n\n${rule}` : rule;
    }

    const tools = await resolveTools(step, ctx, this.path);
    this.tools = new Map(tools.map((tool) => [tool.name, tool]));
    this.definitions = tools.map((tool) => tool.definition);
    this.approve = new Set(
      step.approve_tools === 'all'
        ? tools.map((t) => t.name)
        : Array.isArray(step.approve_tools)
          ? (step.approve_tools as string[])
          : [],
    );
    this.limit = conversationLimit(ctx.budget.maxResultBytes);
    this.bytes = bytesOf(JSON.stringify(this.definitions));
    if (system !== undefined) this.add({ role: 'system', content: system }, bytesOf(system));
    this.add({ role: 'user', content: prompt }, bytesOf(prompt));
    if (this.bytes > this.limit)
      throw this.fail(
        `the prompt and the tool definitions take ${this.bytes} bytes, more than the agent's conversation limit of ${this.limit}`,
      );

    let lastError: string | undefined;
    for (let turn = 1; ; turn++) {
      const reply = await this.turn(turn);
      if (reply.tool_calls.length === 0) return this.finish(reply, turn);
      if (turn >= maxTurns) {
        throw this.fail(
          `the model still called tools after max_turns (${maxTurns}) turns, without a final answer${lastError ? `; the last tool error: ${lastError}` : ''}`,
          'AgentTurnLimit',
        );
      }
      const calls = this.keyed(turn, reply.tool_calls);
      this.add(
        {
          role: 'assistant',
          content: reply.content,
          tool_calls: calls.map(({ call }) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.name, arguments: call.arguments },
          })),
        },
        bytesOf(reply.content ?? '') +
          calls.reduce((sum, { call }) => sum + bytesOf(call.id + call.name + call.arguments), 0),
      );
      // Each call counts itself busy while it runs (a call waiting for a person does not): see call().
      ctx.journal?.busy(-1);
      let outcomes: CallOutcome[];
      try {
        outcomes = await Promise.all(calls.map(({ call, key }) => this.call(turn, call, key)));
      } finally {
        ctx.journal?.busy(1);
      }
      this.toolCalls += calls.length;
      lastError = undefined;
      calls.forEach(({ call }, i) => {
        const outcome = outcomes[i];
        let text: string;
        if ('error' in outcome) {
          text = `Error: ${cutBytes(outcome.error, AGENT_TOOL_ERROR_BYTES - 7)}`;
          lastError = `${call.name}: ${cutChars(outcome.error, 300)}`;
        } else {
          text = typeof outcome.result === 'string' ? outcome.result : (JSON.stringify(outcome.result) ?? 'null');
          const left = this.limit - this.bytes;
          if (bytesOf(text) > left)
            text = `Error: the result is ${bytesOf(text)} bytes, more than the ${Math.max(0, left)} bytes left in this conversation`;
        }
        this.add({ role: 'tool', tool_call_id: call.id, content: text }, bytesOf(text));
      });
    }
  }

  private add(message: OpenAI.ChatCompletionMessageParam, bytes: number): void {
    this.messages.push(message);
    this.bytes += bytes;
  }

  /** Ids for the calls of a turn (the model's, or `call_<turn>_<n>` when it gave none) and keys unique within the step. */
  private keyed(turn: number, calls: AgentToolCall[]): { call: AgentToolCall; key: string }[] {
    return calls.map((raw, i) => {
      const call = { ...raw, id: raw.id || `call_${turn}_${i + 1}` };
      let key = CALL_KEY.test(call.id) && !this.keys.has(call.id) ? call.id : `t${turn}-${i + 1}`;
      for (let n = 2; this.keys.has(key); n++) key = `t${turn}-${i + 1}-${n}`;
      this.keys.add(key);
      return { call, key };
    });
  }

  /** Through the run's request gate (step cache, recorded replay) at a sub-step's own path. */
  private gated<T extends StepResult>(path: string, request: unknown, call: () => Promise<T>): Promise<StepResult> {
    const { gate } = this.ctx;
    if (!gate) return call();
    return gate.through(
      { step: this.step, path, run: this.ctx.run, signal: this.ctx.signal, durable: true },
      request,
      call,
    );
  }

  private async record(
    path: string,
    record: Parameters<NonNullable<StepContext['journal']>['complete']>[1],
  ): Promise<void> {
    const { journal, deps, run } = this.ctx;
    if (!journal) return;
    await journal
      .complete(path, record)
      .catch((error: unknown) =>
        deps.log.warn({ err: error, run: run.uid, step: path }, 'could not record a completed agent sub-step'),
      );
  }

  private event(event: Omit<StepEvent, 'step_id' | 'kind' | 'started_at'> & { step_id?: string }): void {
    this.ctx.observer?.step({
      step_id: this.step.id,
      kind: 'agent',
      started_at: this.ctx.stepStartedAt ?? new Date().toISOString(),
      ...event,
    });
  }

  private addUsage(usage: JournalEntry['usage'] | undefined): void {
    if (!usage) return;
    this.usage.promptTokens += usage.prompt_tokens;
    this.usage.completionTokens += usage.completion_tokens;
    this.usage.totalTokens += usage.total_tokens;
  }

  /** Model turn `turn`: from the journal when an earlier attempt finished it, else asked (through the gate) and journaled. */
  private async turn(turn: number): Promise<AgentReply> {
    const { step, ctx } = this;
    const path = `${this.path}/turn-${turn}`;
    const known = ctx.journal?.recorded(path);
    if (known?.status === 'completed') {
      this.credits += known.credits;
      this.addUsage(known.usage);
      return replyOf(known.output);
    }
    const left = this.limit - this.bytes;
    if (left <= 0) throw this.fail(`the agent's conversation reached its limit of ${this.limit} bytes`);
    const startedAt = new Date().toISOString();
    const maxTokens = typeof step.max_tokens === 'number' ? step.max_tokens : LLM_DEFAULT_MAX_TOKENS;
    const request: TurnRequest = {
      model: step.model as string,
      messages: [...this.messages],
      tools: this.definitions,
      temperature: typeof step.temperature === 'number' ? step.temperature : null,
      max_tokens: maxTokens,
    };
    const span = ctx.trace
      ? startSpan('circuit.agent.turn', ctx.trace.context, { 'circuit.step.id': path })
      : undefined;
    let result: StepResult;
    // The model call's CLIENT span (chat, in modelTurn) is a child of the turn's, which also covers the step cache.
    const turnCtx: StepContext =
      span && ctx.trace ? { ...ctx, trace: { ...ctx.trace, context: childContext(ctx.trace.context, span) } } : ctx;
    try {
      result = await this.gated(path, { agent_turn: request }, () =>
        modelTurn(step, turnCtx, request, {
          promptTokens: turnTokenBound(this.bytes, this.messages.length, 0),
          maxReplyBytes: left,
          maxToolCalls: AGENT_MAX_TOOL_CALLS_PER_TURN,
        }),
      );
    } catch (error) {
      if (span) endSpan(span, error instanceof Error ? error.message : String(error));
      throw error;
    }
    const reply = replyOf(result.output);
    const usage = result.usage && {
      prompt_tokens: result.usage.promptTokens,
      completion_tokens: result.usage.completionTokens,
      total_tokens: result.usage.totalTokens,
    };
    this.credits += result.credits;
    this.addUsage(usage);
    await this.record(path, {
      kind: 'agent',
      output: reply,
      started_at: startedAt,
      ended_at: new Date().toISOString(),
      credits: result.credits,
      ...(usage ? { usage } : {}),
    });
    if (span) {
      span.setAttributes({
        'circuit.step.cached': result.reused === 'cached',
        'circuit.step.credits': result.credits,
        'circuit.agent.tool_calls': reply.tool_calls.length,
      });
      endSpan(span);
    }
    this.event({
      status: 'agent_turn',
      turn,
      credits: result.credits,
      ...(result.reused === 'cached' ? { cached: true } : result.reused === 'replayed' ? { replayed: true } : {}),
    });
    return reply;
  }

  /**
   * One tool call: from the journal when an earlier attempt finished it; else checked (a known tool,
   * arguments that are a JSON object fitting its parameters), approved by a person when the tool is in
   * approve_tools, run through the gate, and journaled — its result, or the error the model is told.
   */
  private async call(turn: number, call: AgentToolCall, key: string): Promise<CallOutcome> {
    const { step, ctx } = this;
    const path = `${this.path}/turn-${turn}.call-${key}`;
    this.tally.steps++;
    if (this.tally.steps > ctx.budget.maxSteps)
      throw this.fail(
        `the run reached its limit of ${ctx.budget.maxSteps} steps (embedded runs and tool calls included)`,
      );
    const known = ctx.journal?.recorded(path);
    if (known?.status === 'completed') {
      this.credits += known.credits;
      return outcomeOf(known.output);
    }
    ctx.journal?.busy(1);
    try {
      const startedAt = new Date().toISOString();
      const events = { turn, tool: call.name, call_id: call.id };
      this.event({ status: 'tool_call', ...events });
      const toolSpan = ctx.trace
        ? startToolSpan(ctx.trace.context, { name: call.name, callId: call.id, type: 'function' })
        : undefined;
      const span = toolSpan?.span;
      span?.setAttribute('circuit.step.id', path);
      let outcome: CallOutcome;
      let credits = 0;
      let reused: StepResult['reused'];
      try {
        const checked = this.check(call);
        if ('error' in checked) {
          outcome = checked;
        } else {
          const { tool, args } = checked;
          try {
            const result = await this.gated(path, { agent_tool: toolRequest(tool, args) }, async () => {
              if (this.approve.has(tool.name)) await this.approval(turn, call, key, args);
              // The call's span is the parent of what it does (an embedded run's span, an http request's traceparent).
              const callCtx: StepContext =
                toolSpan && ctx.trace ? { ...ctx, trace: { ...ctx.trace, context: toolSpan.context } } : ctx;
              return runTool(step, callCtx, tool, args, { path, tally: this.tally });
            });
            outcome = outcomeOf(result.output);
            credits = result.credits;
            reused = result.reused;
          } catch (error) {
            if (!(error instanceof ToolFailure) || ctx.signal.aborted) throw error;
            outcome = { error: error.message };
            credits = error.spent;
          }
        }
      } catch (error) {
        if (span) endSpan(span, error instanceof Error ? error.message : String(error));
        throw error;
      }
      this.credits += credits;
      await this.record(path, {
        kind: 'agent',
        output: outcome,
        started_at: startedAt,
        ended_at: new Date().toISOString(),
        credits,
      });
      const error = 'error' in outcome ? outcome.error : undefined;
      if (span) {
        span.setAttributes({ 'circuit.step.cached': reused === 'cached', 'circuit.step.credits': credits });
        endSpan(span, error);
      }
      this.event({
        status: 'tool_result',
        ...events,
        credits,
        ...(error !== undefined ? { error: cutChars(error, 500) } : {}),
        ...(reused === 'cached' ? { cached: true } : reused === 'replayed' ? { replayed: true } : {}),
      });
      return outcome;
    } finally {
      ctx.journal?.busy(-1);
    }
  }

  /** A known tool and arguments that fit it, or the error the model is told. */
  private check(call: AgentToolCall): { tool: ResolvedTool; args: Record<string, unknown> } | { error: string } {
    const tool = this.tools.get(call.name);
    if (!tool) {
      return {
        error: `there is no tool named ${JSON.stringify(cutChars(call.name, 80))}; the tools are ${[...this.tools.keys()].join(', ')}`,
      };
    }
    let args: unknown;
    try {
      args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch (error) {
      return {
        error: `the arguments are not valid JSON (${(error as Error).message}): ${JSON.stringify(cutChars(call.arguments, 120))}`,
      };
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args))
      return { error: 'the arguments must be a JSON object' };
    const problem = argumentsProblem(tool, args as Record<string, unknown>, this.ctx);
    if (problem) return { error: problem };
    return { tool, args: args as Record<string, unknown> };
  }

  /**
   * Waits for a person to approve a tool call (docs/agents.md, Approving tool calls): an approval at
   * `<step>:<key>`, parked like any wait. A rejection (or the timeout) is a ToolFailure the model is told.
   */
  private async approval(turn: number, call: AgentToolCall, key: string, args: Record<string, unknown>) {
    const { step, ctx } = this;
    if (!ctx.journal) throw this.fail('agent steps cannot wait for approvals here', 'Internal');
    const stepId = `${step.id}:${key}`;
    const timeoutSeconds =
      typeof step.approval_timeout_s === 'number' ? step.approval_timeout_s : AGENT_APPROVAL_TIMEOUT_S;
    const prompt = `Allow the agent step ${step.id} to call the tool ${call.name} with the arguments ${cutChars(JSON.stringify(args), APPROVAL_ARGUMENT_CHARS)}?`;
    const resolved = await ctx.journal.waitFor(
      `${ctx.path ?? ''}${stepId}`,
      'approval',
      { for: 'approval', prompt, timeoutSeconds, onTimeout: 'reject' },
      ctx.signal,
      (entry) =>
        this.event({
          step_id: stepId,
          status: 'waiting',
          for: 'approval',
          prompt: entry.prompt,
          expires_at: entry.expires_at,
          turn,
          tool: call.name,
          call_id: call.id,
        }),
    );
    const refusal = refusalOf(resolved.decision as ApprovalDecision, timeoutSeconds);
    if (refusal) throw new ToolFailure(refusal);
  }

  /** The final answer: the text, or with output_schema the JSON it holds, checked against the schema. */
  private finish(reply: AgentReply, turns: number): StepResult {
    const { step, ctx } = this;
    let answer: unknown = reply.content ?? '';
    if (step.output_schema !== undefined) {
      const text = String(answer)
        .trim()
        .replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, '$1');
      try {
        answer = JSON.parse(text);
      } catch {
        throw this.fail(
          `the model's final answer is not JSON, which output_schema requires: ${JSON.stringify(cutChars(text, 120))}`,
          'OutputContractViolation',
        );
      }
      const invalid = checkInput(
        ctx.deps.schemas.inputs,
        `${ctx.run.versionUid}#${this.path}/output_schema`,
        step.output_schema,
        answer,
        'answer',
      );
      if (invalid)
        throw this.fail(
          `the model's final answer does not match output_schema: ${invalid.message}`,
          'OutputContractViolation',
        );
    }
    return {
      output: { answer, turns, tool_calls: this.toolCalls },
      credits: this.credits,
      usage: { ...this.usage },
    };
  }
}

/** A turn's reply as recorded (journal, cache, replay), read defensively. */
function replyOf(output: unknown): AgentReply {
  const value = (output ?? {}) as { content?: unknown; tool_calls?: unknown };
  const calls = Array.isArray(value.tool_calls) ? (value.tool_calls as Partial<AgentToolCall>[]) : [];
  return {
    content: typeof value.content === 'string' ? value.content : null,
    tool_calls: calls.map((call) => ({
      id: typeof call?.id === 'string' ? call.id : '',
      name: typeof call?.name === 'string' ? call.name : '',
      arguments: typeof call?.arguments === 'string' ? call.arguments : '',
    })),
  };
}

/** A call's outcome as recorded, read defensively. */
function outcomeOf(output: unknown): CallOutcome {
  const value = (output ?? {}) as { result?: unknown; error?: unknown };
  if (typeof value.error === 'string') return { error: value.error };
  return { result: value.result ?? null };
}
