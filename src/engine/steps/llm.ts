import OpenAI from 'openai';
import { renderTemplate } from '../render';
import { StepError, type StepExecutor } from './types';

export const LLM_TIMEOUT_MS = 60_000;
export const LLM_MAX_RETRIES = 2;
/** Credits an llm step costs: one per started thousand tokens. */
export const creditsForTokens = (totalTokens: number): number => Math.ceil(Math.max(0, totalTokens) / 1000);

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

type Role = 'system' | 'user' | 'assistant';

/** `llm`: one chat completion on the OpenAI-compatible endpoint of OPENAI_BASE_URL; output is the reply text. */
export const llmStep: StepExecutor = async (step, ctx) => {
  if (typeof step.model !== 'string' || !step.model) throw new StepError(step.id, 'model must be a string');
  if (!Array.isArray(step.messages) || step.messages.length === 0) throw new StepError(step.id, 'messages must be a non-empty array');
  const scope = { input: ctx.input, steps: ctx.steps };
  const messages = step.messages.map((raw, i) => {
    const message = raw as { role?: unknown; content?: unknown };
    if (!['system', 'user', 'assistant'].includes(String(message.role)) || typeof message.content !== 'string') {
      throw new StepError(step.id, `messages[${i}] needs a role (system, user or assistant) and a string content`);
    }
    return { role: message.role as Role, content: renderTemplate(message.content, scope) };
  });
  const { config } = ctx.services;
  let completion: OpenAI.Chat.Completions.ChatCompletion;
  try {
    completion = await clientFor(config.openaiBaseUrl, config.openaiApiKey).chat.completions.create(
      {
        model: step.model,
        messages,
        ...(typeof step.temperature === 'number' ? { temperature: step.temperature } : {}),
        ...(typeof step.max_tokens === 'number' ? { max_tokens: step.max_tokens } : {}),
      },
      { signal: ctx.signal },
    );
  } catch (error) {
    const e = error as { status?: number; message?: string };
    throw new StepError(step.id, `model call failed${e.status ? ` (HTTP ${e.status})` : ''}: ${e.message ?? String(error)}`);
  }
  const output = completion.choices?.[0]?.message?.content;
  if (typeof output !== 'string') throw new StepError(step.id, 'the model returned no text');
  const usage = {
    promptTokens: completion.usage?.prompt_tokens ?? 0,
    completionTokens: completion.usage?.completion_tokens ?? 0,
    totalTokens: completion.usage?.total_tokens ?? 0,
  };
  return { output, credits: creditsForTokens(usage.totalTokens), usage };
};
