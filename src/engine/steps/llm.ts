import OpenAI from 'openai';
import { renderAll, templateFailure } from '../render';
import { templateField } from './field-schemas';
import { defineStepKind, holdCredits, sandboxLimits, StepError, type StepContext } from './types';

export const LLM_TIMEOUT_MS = 60_000;
export const LLM_MAX_RETRIES = 2;
/** The reply limit sent when a step sets no max_tokens, so the credits held always cover the reply. */
export const LLM_DEFAULT_MAX_TOKENS = 1024;
/** At most one `output` event per this many ms per step (DESIGN §7.2: ~20 a second). */
export const OUTPUT_EVENT_INTERVAL_MS = 50;
export const LLM_ROLES = ['system', 'user', 'assistant'] as const;
type Role = (typeof LLM_ROLES)[number];

/** Credits an llm step costs: one per started thousand tokens. */
export const creditsForTokens = (totalTokens: number): number => Math.ceil(Math.max(0, totalTokens) / 1000);

/** A generous token estimate for the prompt (about 3 bytes a token, plus per-message overhead). */
export function estimatePromptTokens(messages: { content: string }[]): number {
  return messages.reduce((sum, m) => sum + Math.ceil(Buffer.byteLength(m.content) / 3) + 8, 0);
}

const clients = new Map<string, OpenAI>();

function clientFor(baseURL: string, apiKey: string): OpenAI {
  const key = `${baseURL}\n${apiKey}`;
  let client = clients.get(key);
  if (!client) {
    client = new OpenAI({ baseURL, apiKey, timeout: LLM_TIMEOUT_MS, maxRetries: LLM_MAX_RETRIES });
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

/** The failure of a model call in words that carry no key, URL or upstream text. */
function modelFailure(error: unknown, ctx: StepContext): string {
  if (ctx.signal.aborted) return 'model call was stopped: the run ended';
  if (error instanceof OpenAI.APIConnectionTimeoutError) return `model call timed out after ${LLM_TIMEOUT_MS / 1000} s`;
  if (error instanceof OpenAI.APIConnectionError) return 'model call failed: the model endpoint could not be reached';
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number') return `model call failed (HTTP ${status})`;
  return 'model call failed';
}

/**
 * `llm`: one chat completion on the OpenAI-compatible endpoint of OPENAI_BASE_URL, streamed; the
 * output is the whole reply text and text deltas go to the run's observer as they arrive. The
 * credits for the prompt and `max_tokens` are held before the call.
 */
export const llmStep = defineStepKind({
  kind: 'llm',
  durable: true,
  summary: `Asks a chat model (OpenAI-compatible endpoint) for a reply; the output is the reply text. Usage is recorded; 1 credit per started 1,000 tokens; max_tokens defaults to ${LLM_DEFAULT_MAX_TOKENS}.`,
  fields: {
    model: { type: 'string', pattern: '\\S', description: 'The model name.', 'x-message': 'must be a non-empty string' },
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
    temperature: { type: 'number', minimum: 0, maximum: 2, description: 'Sampling temperature.', 'x-message': 'must be a number from 0 to 2' },
    max_tokens: { type: 'integer', minimum: 1, description: 'The longest reply, in tokens.', 'x-message': 'must be a positive integer' },
  },
  required: ['model', 'messages'],
  async execute(step, ctx) {
    if (typeof step.model !== 'string' || !step.model) throw new StepError(step.id, 'model must be a string');
    if (!Array.isArray(step.messages) || step.messages.length === 0) throw new StepError(step.id, 'messages must be a non-empty array');
    const raw = step.messages.map((m, i) => {
      const message = m as { role?: unknown; content?: unknown };
      if (!(LLM_ROLES as readonly string[]).includes(String(message.role)) || typeof message.content !== 'string') {
        throw new StepError(step.id, `messages[${i}] needs a role (${LLM_ROLES.join(', ')}) and a string content`);
      }
      return { role: message.role as Role, content: message.content };
    });
    let contents: string[];
    try {
      contents = await renderAll(raw.map((m) => m.content), { input: ctx.input, steps: ctx.steps }, sandboxLimits(ctx));
    } catch (error) {
      throw new StepError(step.id, `messages: ${templateFailure(error)}`);
    }
    const messages = raw.map((m, i) => ({ role: m.role, content: contents[i] }));
    const maxTokens = typeof step.max_tokens === 'number' ? step.max_tokens : LLM_DEFAULT_MAX_TOKENS;
    await holdCredits(ctx, step.id, creditsForTokens(estimatePromptTokens(messages) + maxTokens));

    const { config } = ctx.services;
    const observer = ctx.observer;
    const coalescer = observer ? new DeltaCoalescer((delta) => observer.output(step.id, delta)) : undefined;
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    try {
      const stream = await clientFor(config.openaiBaseUrl, config.openaiApiKey).chat.completions.create(
        {
          model: step.model,
          messages,
          max_tokens: maxTokens,
          stream: true,
          stream_options: { include_usage: true },
          ...(typeof step.temperature === 'number' ? { temperature: step.temperature } : {}),
        },
        { signal: ctx.signal },
      );
      for await (const chunk of stream) {
        const delta = chunk.choices?.[0]?.delta?.content;
        if (delta) {
          text += delta;
          coalescer?.push(delta);
        }
        if (chunk.usage) usage = chunk.usage;
      }
    } catch (error) {
      throw new StepError(step.id, modelFailure(error, ctx));
    } finally {
      coalescer?.flush();
    }
    const totals = {
      promptTokens: usage?.prompt_tokens ?? 0,
      completionTokens: usage?.completion_tokens ?? 0,
      totalTokens: usage?.total_tokens ?? 0,
    };
    return { output: text, credits: creditsForTokens(totals.totalTokens), usage: totals };
  },
  describe: (step) => {
    const count = Array.isArray(step.messages) ? step.messages.length : 0;
    return `Asks the language model ${String(step.model)} for a reply to ${count} message${count === 1 ? '' : 's'}`;
  },
});
