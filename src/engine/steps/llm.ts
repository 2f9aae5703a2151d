import { ChatResponse, endChatSpan, errorType, startChatSpan } from '../../telemetry/client-spans';
import type OpenAI from 'openai';
import { OPENAI_API_KEY_UNSET } from '../../config';
import { renderAll, templateFailure } from '../render';
import {
  AttemptError,
  formatDuration,
  parseRetryAfter,
  parseStepPolicy,
  RETRYABLE_STATUSES,
  STEP_POLICY_DEFAULTS,
  withStepPolicy,
  type Attempt,
} from '../step-policy';
import { stepPolicyFields, templateField } from './field-schemas';
import {
  defineStepKind,
  holdCredits,
  sandboxCall,
  StepError,
  throughGate,
  type StepContext,
  templateScope,
} from './types';

/** The default per-attempt timeout (a step's `timeout_ms` overrides it). Attempts: the step policy's, 3 by default. */
export const LLM_TIMEOUT_MS = STEP_POLICY_DEFAULTS.llm.timeoutMs!;
/** How much of the provider's error message a failure message quotes. */
export const PROVIDER_MESSAGE_CHARS = 300;
/** The reply limit sent when a step sets no max_tokens, so the credits held always cover the reply. */
export const LLM_DEFAULT_MAX_TOKENS = 1024;
/** At most one `output` event per this many ms per step (about 20 a second). */
export const OUTPUT_EVENT_INTERVAL_MS = 50;
export const LLM_ROLES = ['system', 'user', 'assistant'] as const;
type Role = (typeof LLM_ROLES)[number];

/** Credits an llm step costs: one per started thousand tokens. */
export const creditsForTokens = (totalTokens: number): number => Math.ceil(Math.max(0, totalTokens) / 1000);

/** A generous token estimate for the prompt (about 3 bytes a token, plus per-message overhead). */
export function estimatePromptTokens(messages: { content: string }[]): number {
  return messages.reduce((sum, m) => sum + Math.ceil(Buffer.byteLength(m.content) / 3) + 8, 0);
}

/** The OpenAI SDK (~150 modules), loaded by the first model call rather than with the engine. */
function openAiSdk(): typeof OpenAI {
  return (require('openai') as { OpenAI: typeof OpenAI }).OpenAI;
}

/** The client of a base URL and key, made once and kept in `clients` (the deps' modelClients: one pool per process). */
export function clientFor(clients: Map<string, OpenAI>, baseURL: string, apiKey: string): OpenAI {
  const key = `${baseURL}\n${apiKey}`;
  let client = clients.get(key);
  if (!client) {
    // No retries of the client's own: the step policy governs them (step-policy.ts).
    client = new (openAiSdk())({ baseURL, apiKey, timeout: LLM_TIMEOUT_MS, maxRetries: 0 });
    clients.set(key, client);
  }
  return client;
}

/** Joins text deltas so an observer sees at most one per interval, and the rest at the end. */
class DeltaCoalescer {
  private pending = '';
  private last = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly emit: (delta: string) => void) {}

  push(text: string): void {
    this.pending += text;
    if (this.timer) return;
    const wait = Math.max(0, this.last + OUTPUT_EVENT_INTERVAL_MS - Date.now());
    this.timer = setTimeout(() => this.flush(), wait);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending === '') return;
    const delta = this.pending;
    this.pending = '';
    this.last = Date.now();
    this.emit(delta);
  }
}

/** A reply that grew past the run's result limit while streaming. */
class ReplyTooLarge extends Error {}

const isKeyUnset = (apiKey: string): boolean => !apiKey || apiKey === OPENAI_API_KEY_UNSET;

/**
 * What the provider said about a failure (its error object's message), as one bounded line with the
 * API key and anything shaped like a secret (`sk-…`, `Bearer …`) redacted.
 */
export function providerMessage(error: unknown, apiKey: string): string {
  const inner = (error as { error?: { message?: unknown } }).error;
  let text = typeof inner?.message === 'string' ? inner.message : error instanceof Error ? error.message : '';
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number' && text.startsWith(`${status} `)) text = text.slice(String(status).length + 1);
  if (!isKeyUnset(apiKey) && apiKey.length >= 4) text = text.split(apiKey).join('[redacted]');
  text = text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/\bsk-[A-Za-z0-9_*.-]+/g, 'sk-[redacted]')
    .replace(/\bBearer\s+[^\s,;"']+/gi, 'Bearer [redacted]')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = Array.from(text);
  return chars.length > PROVIDER_MESSAGE_CHARS ? `${chars.slice(0, PROVIDER_MESSAGE_CHARS - 1).join('')}…` : text;
}

/** The Retry-After of a provider's answer (`retry-after-ms`, else `retry-after`), in ms. */
function providerRetryAfter(error: InstanceType<typeof OpenAI.APIError>): number | undefined {
  const headers = error.headers as { get?: (name: string) => string | null } | undefined;
  const ms = headers?.get?.('retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  return parseRetryAfter(headers?.get?.('retry-after'));
}

/**
 * A failed model call as the step policy reads it: retryable on connection errors, timeouts and the
 * retryable statuses; the message says what the provider said (bounded, secrets redacted) and never
 * carries the key or the endpoint's URL. `spent`: credits for the tokens earlier attempts used.
 */
export function modelFailure(
  error: unknown,
  stepId: string,
  ctx: StepContext,
  attempt: Attempt,
  apiKey: string,
  streamed: boolean,
  spent: number,
): StepError {
  if (ctx.signal.aborted) return new StepError(stepId, 'model call was stopped: the run ended', 'StepFailed', spent);
  if (attempt.timedOut() || error instanceof openAiSdk().APIConnectionTimeoutError) {
    return new AttemptError(
      stepId,
      `model call timed out after ${formatDuration(attempt.timeoutMs ?? LLM_TIMEOUT_MS)} (timeout_ms per attempt)`,
      { retryable: true, spent },
    );
  }
  const status = error instanceof openAiSdk().APIError && typeof error.status === 'number' ? error.status : undefined;
  const said =
    error instanceof openAiSdk().APIError && !(error instanceof openAiSdk().APIConnectionError)
      ? providerMessage(error, apiKey)
      : '';
  if (isKeyUnset(apiKey)) {
    const answered = status !== undefined ? ` (the model endpoint answered ${status}${said ? `: ${said}` : ''})` : '';
    return new StepError(stepId, `model call failed: OPENAI_API_KEY is not set${answered}`, 'StepFailed', spent);
  }
  if (error instanceof openAiSdk().APIConnectionError) {
    return new AttemptError(stepId, 'model call failed: the model endpoint could not be reached', {
      retryable: true,
      spent,
    });
  }
  if (status !== undefined) {
    const summary = `model call failed (HTTP ${status})`;
    const retryable = RETRYABLE_STATUSES.has(status);
    return new AttemptError(stepId, said ? `${summary}: ${said}` : summary, {
      retryable,
      summary,
      spent,
      ...(retryable ? { retryAfterMs: providerRetryAfter(error as InstanceType<typeof OpenAI.APIError>) } : {}),
    });
  }
  if (said) return new StepError(stepId, `model call failed: ${said}`, 'StepFailed', spent);
  // Not an answer of the provider: the connection broke while the reply streamed in.
  if (streamed)
    return new AttemptError(stepId, 'model call failed: the reply stream broke off', { retryable: true, spent });
  return new StepError(stepId, 'model call failed', 'StepFailed', spent);
}

/**
 * `llm`: one chat completion on the OpenAI-compatible endpoint of OPENAI_BASE_URL, streamed; the
 * output is the whole reply text and text deltas go to the run's observer as they arrive. Attempted
 * up to 3 times by default (the step policy). The credits for the prompt and
 * `max_tokens` are held before each attempt (beyond what is held already); the step is charged for
 * the tokens all attempts used.
 */
export const llmStep = defineStepKind({
  kind: 'llm',
  durable: true,
  summary: `Asks a chat model (OpenAI-compatible endpoint) for a reply; the output is the reply text. Usage is recorded; 1 credit per started 1,000 tokens (all attempts); max_tokens defaults to ${LLM_DEFAULT_MAX_TOKENS}; up to 3 attempts of 120 s unless retry or timeout_ms say otherwise.`,
  fields: {
    model: {
      type: 'string',
      pattern: '\\S',
      description: 'The model name.',
      'x-message': 'must be a non-empty string',
    },
    messages: {
      type: 'array',
      minItems: 1,
      description: 'The conversation, in order.',
      'x-message': 'must be a non-empty array',
      items: {
        type: 'object',
        required: ['role', 'content'],
        additionalProperties: false,
        'x-message': 'must be an object with role and content',
        properties: {
          role: { enum: [...LLM_ROLES], 'x-message': `must be one of ${LLM_ROLES.join(', ')}` },
          content: templateField('The message text.'),
        },
      },
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
      description: 'The longest reply, in tokens.',
      'x-message': 'must be a positive integer',
    },
    ...stepPolicyFields('llm'),
  },
  required: ['model', 'messages'],
  async execute(step, ctx) {
    if (typeof step.model !== 'string' || !step.model) throw new StepError(step.id, 'model must be a string');
    if (!Array.isArray(step.messages) || step.messages.length === 0)
      throw new StepError(step.id, 'messages must be a non-empty array');
    const raw = step.messages.map((m, i) => {
      const message = m as { role?: unknown; content?: unknown };
      if (!(LLM_ROLES as readonly string[]).includes(String(message.role)) || typeof message.content !== 'string') {
        throw new StepError(step.id, `messages[${i}] needs a role (${LLM_ROLES.join(', ')}) and a string content`);
      }
      return { role: message.role as Role, content: message.content };
    });
    let contents: string[];
    try {
      contents = await renderAll(
        raw.map((m) => m.content),
        templateScope(ctx),
        sandboxCall(ctx),
      );
    } catch (error) {
      throw new StepError(step.id, `messages: ${templateFailure(error)}`);
    }
    const messages = raw.map((m, i) => ({ role: m.role, content: contents[i] }));
    const maxTokens = typeof step.max_tokens === 'number' ? step.max_tokens : LLM_DEFAULT_MAX_TOKENS;
    const temperature = typeof step.temperature === 'number' ? step.temperature : null;
    return throughGate(ctx, { model: step.model, messages, temperature, max_tokens: maxTokens }, async () => {
      const policy = parseStepPolicy(step, 'llm');
      const estimate = estimatePromptTokens(messages) + maxTokens;
      const { config } = ctx.deps;
      const apiKey = config.openaiApiKey || OPENAI_API_KEY_UNSET;
      const client = clientFor(ctx.deps.modelClients, config.openaiBaseUrl, apiKey);
      const observer = ctx.observer;
      // Tokens used by all attempts (a failed one that reported usage too): what the step is charged.
      const used = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
      const addUsage = (usage: OpenAI.CompletionUsage | undefined) => {
        used.promptTokens += usage?.prompt_tokens ?? 0;
        used.completionTokens += usage?.completion_tokens ?? 0;
        used.totalTokens += usage?.total_tokens ?? 0;
      };
      let held = 0;
      // The reply may be no larger than what is left of the run's result (RUN_MAX_RESULT_BYTES): a
      // provider that streams on and on is cut off there, and its output events, over all attempts,
      // store no more than that either.
      const replyLimit = Math.max(0, ctx.budget.maxResultBytes - (ctx.tally?.outputBytes ?? 0));
      let observed = 0;
      const text = await withStepPolicy(step, ctx, policy, async (attempt) => {
        // Held before each attempt, so credits are never overspent: what this attempt may use on top of
        // what earlier attempts used (nothing more, usually: a failed attempt rarely reports usage).
        const need = creditsForTokens(used.totalTokens + estimate) - held;
        if (need > 0) {
          try {
            await holdCredits(ctx, step.id, need);
          } catch (error) {
            if (error instanceof StepError)
              throw new StepError(step.id, error.message, error.code, creditsForTokens(used.totalTokens));
            throw error;
          }
          held += need;
        }
        // Deltas of a failed attempt have been sent already: after a `retrying` event the reply starts again.
        const coalescer = observer ? new DeltaCoalescer((delta) => observer.output(step.id, delta)) : undefined;
        let reply = '';
        let replyBytes = 0;
        let usage: OpenAI.CompletionUsage | undefined;
        let streamed = false;
        const chat = ctx.trace
          ? startChatSpan(ctx.trace.context, config.openaiBaseUrl, {
              model: step.model as string,
              maxTokens,
              temperature,
            })
          : undefined;
        const response = new ChatResponse();
        try {
          const stream = await client.chat.completions.create(
            {
              model: step.model as string,
              messages,
              max_tokens: maxTokens,
              stream: true,
              stream_options: { include_usage: true },
              ...(typeof step.temperature === 'number' ? { temperature: step.temperature } : {}),
            },
            { signal: attempt.signal, timeout: attempt.timeoutMs ?? LLM_TIMEOUT_MS, maxRetries: 0 },
          );
          streamed = true;
          for await (const chunk of stream) {
            const delta = chunk.choices?.[0]?.delta?.content;
            if (delta) {
              const bytes = Buffer.byteLength(delta);
              replyBytes += bytes;
              // Thrown inside the loop: leaving it closes the stream (and its connection).
              if (replyBytes > replyLimit) throw new ReplyTooLarge();
              reply += delta;
              if (observed + bytes <= replyLimit) {
                observed += bytes;
                coalescer?.push(delta);
              }
            }
            if (chunk.usage) usage = chunk.usage;
            response.see(chunk);
          }
          // The client ends the stream quietly when the signal aborts: a cut-off reply is no reply.
          if (attempt.signal.aborted) throw attempt.signal.reason;
        } catch (error) {
          if (chat)
            endChatSpan(chat.span, response, {
              type: attempt.timedOut() ? 'timeout' : errorType(error),
              message: error instanceof Error ? error.message : String(error),
            });
          addUsage(usage);
          if (error instanceof ReplyTooLarge) {
            // No usage comes with a cut-off stream: charged as the held prompt and max_tokens, at most.
            const spent = Math.max(
              creditsForTokens(used.totalTokens),
              Math.min(held, creditsForTokens(estimatePromptTokens(messages) + Math.ceil(replyBytes / 4))),
            );
            throw new StepError(
              step.id,
              `the model's reply is larger than ${replyLimit} bytes (what is left of the run's result limit); it was cut off there`,
              'StepFailed',
              spent,
            );
          }
          throw modelFailure(error, step.id, ctx, attempt, apiKey, streamed, creditsForTokens(used.totalTokens));
        } finally {
          coalescer?.flush();
        }
        if (chat) endChatSpan(chat.span, response);
        addUsage(usage);
        return reply;
      });
      return { output: text, credits: creditsForTokens(used.totalTokens), usage: { ...used } };
    });
  },
  describe: (step) => {
    const count = Array.isArray(step.messages) ? step.messages.length : 0;
    return `Asks the language model ${String(step.model)} for a reply to ${count} message${count === 1 ? '' : 's'}`;
  },
});
