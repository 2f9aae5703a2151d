import type OpenAI from 'openai';
import { OPENAI_API_KEY_UNSET } from '../../config';
import { ChatResponse, endChatSpan, errorType, startChatSpan } from '../../telemetry/client-spans';
import type { StepDefinition } from '../../domain/definition';
import { parseStepPolicy, withStepPolicy } from '../step-policy';
import { clientFor, creditsForTokens, LLM_TIMEOUT_MS, modelFailure } from './llm';
import { holdCredits, StepError, type StepContext, type StepResult } from './types';

/**
 * One model turn of an `agent` step (docs/agents.md): a streamed chat completion with tool definitions, read
 * into the reply text and the tool calls it asks for, within bounds a hostile or broken model cannot pass
 * (the reply's bytes, the tool calls per turn). Attempted like an `llm` call (3 attempts of 120 s), with the
 * credits for the prompt and `max_tokens` held before each attempt.
 */

/** A tool call as the model asked for it: `arguments` is the model's text (JSON, when the model behaves). */
export interface AgentToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A model turn's answer: its text (null when it only calls tools) and its tool calls. What the journal keeps of a turn. */
export interface AgentReply {
  content: string | null;
  tool_calls: AgentToolCall[];
}

/** What a turn sends the model: everything that decides the answer (the cache's and replay's request). */
export interface TurnRequest {
  model: string;
  messages: OpenAI.ChatCompletionMessageParam[];
  tools: OpenAI.ChatCompletionTool[];
  temperature: number | null;
  max_tokens: number;
}

/** A turn's token bound: about 3 bytes a token over the whole conversation, 9 a message for the framing, plus the reply. */
export function turnTokenBound(conversationBytes: number, messages: number, maxTokens: number): number {
  return Math.ceil(conversationBytes / 3) + 9 * messages + maxTokens;
}

class ReplyTooLarge extends Error {}
class TooManyToolCalls extends Error {}

/**
 * Calls the model once (with the step policy's attempts). `promptTokens`: the turn's token bound without
 * the reply (what is held, with max_tokens); `maxReplyBytes`: what is left of the conversation for the reply;
 * `maxToolCalls`: the most tool calls one answer may ask for. A reply past either bound fails the step.
 */
export async function modelTurn(
  step: StepDefinition,
  ctx: StepContext,
  request: TurnRequest,
  limits: { promptTokens: number; maxReplyBytes: number; maxToolCalls: number },
): Promise<StepResult & { output: AgentReply }> {
  const policy = parseStepPolicy(step, 'llm');
  const { config } = ctx.deps;
  const apiKey = config.openaiApiKey || OPENAI_API_KEY_UNSET;
  const client = clientFor(ctx.deps.modelClients, config.openaiBaseUrl, apiKey);
  const estimate = limits.promptTokens + request.max_tokens;
  const used = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  const addUsage = (usage: OpenAI.CompletionUsage | undefined) => {
    used.promptTokens += usage?.prompt_tokens ?? 0;
    used.completionTokens += usage?.completion_tokens ?? 0;
    used.totalTokens += usage?.total_tokens ?? 0;
  };
  let held = 0;
  const reply = await withStepPolicy(
    step,
    { signal: ctx.signal, observer: ctx.observer, stepStartedAt: ctx.stepStartedAt },
    policy,
    async (attempt) => {
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
      let content = '';
      const calls = new Map<number, AgentToolCall>();
      let bytes = 0;
      let usage: OpenAI.CompletionUsage | undefined;
      let streamed = false;
      const chat = ctx.trace
        ? startChatSpan(ctx.trace.context, config.openaiBaseUrl, {
            model: request.model,
            maxTokens: request.max_tokens,
            temperature: request.temperature,
          })
        : undefined;
      const response = new ChatResponse();
      const count = (text: string) => {
        bytes += Buffer.byteLength(text);
        if (bytes > limits.maxReplyBytes) throw new ReplyTooLarge();
      };
      try {
        const stream = await client.chat.completions.create(
          {
            model: request.model,
            messages: request.messages,
            tools: request.tools,
            max_tokens: request.max_tokens,
            stream: true,
            stream_options: { include_usage: true },
            ...(request.temperature !== null ? { temperature: request.temperature } : {}),
          },
          { signal: attempt.signal, timeout: attempt.timeoutMs ?? LLM_TIMEOUT_MS, maxRetries: 0 },
        );
        streamed = true;
        // Thrown inside the loop: leaving it closes the stream (and its connection).
        for await (const chunk of stream) {
          const delta = chunk.choices?.[0]?.delta;
          if (typeof delta?.content === 'string' && delta.content !== '') {
            count(delta.content);
            content += delta.content;
          }
          for (const part of Array.isArray(delta?.tool_calls) ? delta.tool_calls : []) {
            const index = typeof part.index === 'number' ? part.index : calls.size;
            let call = calls.get(index);
            if (!call) {
              if (calls.size >= limits.maxToolCalls) throw new TooManyToolCalls();
              call = { id: '', name: '', arguments: '' };
              calls.set(index, call);
            }
            // The id and name come whole (some providers repeat them in later chunks); the arguments in pieces.
            if (typeof part.id === 'string' && part.id !== '') {
              count(part.id);
              call.id = part.id;
            }
            if (typeof part.function?.name === 'string' && part.function.name !== '') {
              count(part.function.name);
              call.name = part.function.name;
            }
            if (typeof part.function?.arguments === 'string') {
              count(part.function.arguments);
              call.arguments += part.function.arguments;
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
        if (error instanceof ReplyTooLarge || error instanceof TooManyToolCalls) {
          // No usage comes with a cut-off stream: charged as the held prompt and max_tokens, at most.
          const spent = Math.max(
            creditsForTokens(used.totalTokens),
            Math.min(held, creditsForTokens(limits.promptTokens + Math.ceil(bytes / 4))),
          );
          throw new StepError(
            step.id,
            error instanceof TooManyToolCalls
              ? `the model asked for more than ${limits.maxToolCalls} tool calls in one turn; it was cut off there`
              : `the model's reply is larger than ${limits.maxReplyBytes} bytes (what is left of the agent's conversation limit); it was cut off there`,
            'StepFailed',
            spent,
          );
        }
        throw modelFailure(error, step.id, ctx, attempt, apiKey, streamed, creditsForTokens(used.totalTokens));
      }
      if (chat) endChatSpan(chat.span, response);
      addUsage(usage);
      return {
        content: content === '' && calls.size > 0 ? null : content,
        tool_calls: [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call),
      };
    },
  );
  return { output: reply, credits: creditsForTokens(used.totalTokens), usage: { ...used } };
}
