import type { TraceContext } from '../../telemetry/tracing';
import type { EngineDeps } from '../ports';
import type { SandboxCall } from '../../sandbox/sandbox';
import type { CircuitDefinition, StepDefinition } from '../../domain/definition';
import type { RunBudget, RunErrorCode, RunObserver, StepJournal } from '../run-control';

/** Counted over a whole run, embedded runs included (one object shared by every level). */
export interface RunTally {
  steps: number;
  /** JSON bytes of the step outputs so far: the result_blob is at least this big. */
  outputBytes: number;
}

/** What result_blob.steps holds for each step (docs/circuit-definition.md, The result). */
export interface StepRecord {
  kind: string;
  output: unknown;
  started_at: string;
  ended_at: string;
  credits: number;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  /** Served from the step cache: no upstream call, 0 credits. */
  cached?: boolean;
  /** A recorded replay reused the original run's output for the same request. */
  replayed?: boolean;
}

export interface ExecutionResult {
  output: unknown;
  steps: Record<string, StepRecord>;
  /** Credits of the steps (the run's base cost is added by the caller). */
  credits: number;
}

/** What the job layer hands the engine to execute a run. */
export interface ExecutionContext {
  run: { uid: string; userUid: string; circuitUid: string; versionUid: string };
  /** The long-lived pieces the steps use (logger, settings, blob storage, sandbox, model clients…). */
  deps: EngineDeps;
  signal: AbortSignal;
  /** Nesting depth of embedded circuits; the `circuit` step refuses past a limit. */
  depth: number;
  observer?: RunObserver;
  budget: RunBudget;
  /** Set by the executor at depth 0 and shared with embedded runs. */
  tally?: RunTally;
  /** The run's durable step record (what an attempt after a worker's death reuses), shared with embedded runs. */
  journal?: StepJournal;
  /** Prefix of this level's step paths in the journal: '' at the top, `<step id>/` inside an embedded run. */
  path?: string;
  /**
   * Ids of steps of this run that failed in the end with a failure worth retrying (a connection error,
   * a timeout, a retryable status). Set by a `circuit` step for the run it embeds, to
   * decide whether retrying the embedded run may help; the step-policy runner adds to it.
   */
  retryableFailures?: Set<string>;
  /** Where a step's rendered request may be answered without an upstream call (step cache, recorded replay); shared with embedded runs. */
  gate?: RequestGate;
  /**
   * The URLs of this level's waits (`{{waits.<id>.callback_url}}`, `decision_url`), fixed when the run is
   * created; set by the executor from the definition and the engine's `waitUrls`.
   */
  waits?: Record<string, WaitUrls>;
  /** The trace span this level's steps are children of (the run's, or an embedded run's), and the run's attempt; absent with traces off. */
  trace?: { context: TraceContext; attempt: number };
}

/** Where a wait of a run can be answered from outside: a signal's callback URL, an approval's decision URL. */
export interface WaitUrls {
  callback_url?: string;
  decision_url?: string;
}

/** Where a step is, for the request gate. */
export interface GatedStep {
  step: StepDefinition;
  /** The step's journal path (`outer/inner` in embedded runs). */
  path: string;
  run: ExecutionContext['run'];
  signal: AbortSignal;
  /** The kind is durable (llm, http, blob, circuit): its request is recorded for replay. */
  durable: boolean;
}

/**
 * The step cache and recorded replays (docs/runs.md): each kind renders its request (templates filled in), then hands it here with
 * the call that makes it. The gate may answer from the step cache or from the run a recorded replay
 * replays (`reused` set, 0 credits), else makes the call (storing a cacheable result). Implemented
 * by the job layer (src/runs/step-gate.ts); absent, the call is simply made.
 */
export interface RequestGate {
  through(at: GatedStep, request: unknown, call: () => Promise<StepResult>): Promise<StepResult>;
}

/** What a step sees: the run's input, the outputs of steps already finished, and the engine's deps. */
export interface StepContext extends ExecutionContext {
  input: unknown;
  steps: Record<string, { output: unknown }>;
  /** Runs another definition inside this run (the `circuit` step), sharing its budget and signal. */
  runDefinition?: (
    definition: CircuitDefinition,
    input: unknown,
    context: ExecutionContext,
  ) => Promise<ExecutionResult>;
  /** When the executor started this step (its `started` event); `retrying` events carry the same. */
  stepStartedAt?: string;
  /** This step's way through the request gate (see throughGate); set by the executor when the run has a gate. */
  request?: (request: unknown, call: () => Promise<StepResult>) => Promise<StepResult>;
}

/** What templates and expressions of a step read: the input, finished steps, and the run's wait URLs when it has waits. */
export function templateScope(ctx: StepContext): Record<string, unknown> {
  return ctx.waits && Object.keys(ctx.waits).length > 0
    ? { input: ctx.input, steps: ctx.steps, waits: ctx.waits }
    : { input: ctx.input, steps: ctx.steps };
}

export interface StepResult {
  output: unknown;
  /** Credits this step costs on top of the run's base cost. */
  credits: number;
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
  /** Not executed: served from the step cache or the replayed run. */
  reused?: 'cached' | 'replayed';
}

/**
 * Makes a step's upstream call through the run's request gate. `request` is
 * everything that decides the answer, after templates are rendered (it is hashed, never stored).
 */
export function throughGate(ctx: StepContext, request: unknown, call: () => Promise<StepResult>): Promise<StepResult> {
  return ctx.request ? ctx.request(request, call) : call();
}

export type StepExecutor = (step: StepDefinition, ctx: StepContext) => Promise<StepResult>;

/**
 * A step's failure. The message says what the step saw and is shown to the run's owner, so it never
 * carries a stack, a key, a header value or an internal address; the executor prefixes "<kind> step <id>: ".
 */
export class StepError extends Error {
  /** `spent`: credits used before the failure that the run still pays (an embedded run's finished steps). */
  constructor(
    readonly stepId: string,
    message: string,
    readonly code: RunErrorCode = 'StepFailed',
    readonly spent = 0,
  ) {
    super(message);
    this.name = 'StepError';
  }
}

/** JSON Schema of one field, with the annotations validation and the published schema read. */
export interface FieldSchema {
  [keyword: string]: unknown;
  description?: string;
  /** The text after the field's path when a value fails (per Ajv keyword, or `*` for any). */
  'x-message'?: string | Record<string, string>;
  /** A Handlebars template over `{input, steps}`. */
  'x-template'?: boolean;
  /** JSON whose string leaves are templates. */
  'x-template-leaves'?: boolean;
  /** A JSONata expression over `{input, steps}`. */
  'x-jsonata'?: boolean;
}

/** Words explain uses for a step. */
export interface DescribeHelpers {
  /** A short quoted excerpt of user text. */
  quote(text: string): string;
  /** How a `circuit` step's target is named in words, e.g. `alice/summarize`. */
  nameCircuit(circuitUid: string): string | undefined;
}

/**
 * One step kind (docs/circuit-definition.md, Step kinds): its name, the JSON Schema of its fields (validation and the published
 * definition schema), its executor and its sentence for explain. A new kind is one module exporting
 * one of these plus one line in ./registry.ts.
 */
export interface StepKindModule<K extends string = string> {
  kind: K;
  /** One line for the published definition schema. */
  summary: string;
  fields: Record<string, FieldSchema>;
  required: string[];
  execute: StepExecutor;
  /**
   * The step has an effect outside the run (an upstream call, a read, an embedded run): its output is
   * recorded as it completes, and an attempt after a worker's death reuses it instead of executing it
   * again (docs/runs.md, Durable steps). Steps that only compute over the run's data are executed again.
   */
  durable?: boolean;
  /** What the step does, in words (explain), without the inputs it reads (added by explain). */
  describe(step: StepDefinition, helpers: DescribeHelpers): string;
}

export function defineStepKind<K extends string>(module: StepKindModule<K>): StepKindModule<K> {
  return module;
}

/** Where user logic of this run runs: the sandbox, within STEP_CPU_MS and STEP_MEMORY_MB, outputs within RUN_MAX_RESULT_BYTES. */
export function sandboxCall(ctx: Pick<ExecutionContext, 'deps' | 'budget' | 'run'>): SandboxCall {
  const { config, sandbox } = ctx.deps;
  return {
    sandbox,
    cpuMs: config.stepCpuMs,
    memoryMb: config.stepMemoryMb,
    maxOutputBytes: ctx.budget.maxResultBytes,
    owner: ctx.run.userUid,
    ownerShare: config.sandboxUserIsolates,
  };
}

/** Reserves credits before a step that costs them; throws InsufficientCredits when they cannot be held. */
export async function holdCredits(ctx: StepContext, stepId: string, credits: number): Promise<void> {
  if (credits <= 0) return;
  if (ctx.budget.withinCap && !ctx.budget.withinCap(credits)) {
    throw new StepError(
      stepId,
      `holding the ${credits} credit${credits === 1 ? '' : 's'} this step needs would pass the run's max_credits`,
      'BudgetExceeded',
    );
  }
  if (!(await ctx.budget.hold(credits))) {
    ctx.budget.releaseCap?.(credits);
    throw new StepError(
      stepId,
      `the balance cannot cover the ${credits} credit${credits === 1 ? '' : 's'} this step needs`,
      'InsufficientCredits',
    );
  }
}
