import { SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { tracer } from './tracing';

/**
 * Spans of the calls a run makes to other services (docs/telemetry.md, Outgoing calls): CLIENT spans
 * with OpenTelemetry's HTTP client and GenAI semantic conventions, so a tracing backend shows them as
 * calls out (service maps, model dashboards) rather than as work inside the service.
 */

/** `url.full` as recorded: no user info, query or fragment (each may carry a secret). */
export function recordedUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function serverAttributes(url: URL): Attributes {
  return {
    'server.address': url.hostname.replace(/^\[(.*)\]$/, '$1'),
    'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
  };
}

/** A started client span and the context its outgoing request carries (traceparent). */
export interface ClientSpan {
  span: Span;
  context: Context;
}

function startClient(name: string, parent: Context, attributes: Attributes): ClientSpan {
  const span = tracer().startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

function fail(span: Span, errorType: string, message?: string): void {
  span.setAttribute('error.type', errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
}

/** An HTTP request about to be sent: span name is the method, as the HTTP conventions say. */
export function startHttpClientSpan(parent: Context, method: string, url: URL): ClientSpan {
  return startClient(method, parent, {
    'http.request.method': method,
    ...serverAttributes(url),
    'url.full': recordedUrl(url),
  });
}

/** Ends an HTTP client span with the status it got (4xx/5xx mark it failed), or the error that stopped it. */
export function endHttpClientSpan(span: Span, outcome: { status: number } | { error: string }): void {
  if ('status' in outcome) {
    span.setAttribute('http.response.status_code', outcome.status);
    if (outcome.status >= 400) fail(span, String(outcome.status));
  } else {
    fail(span, outcome.error);
  }
  span.end();
}

/** The GenAI provider of every model call: the service speaks the OpenAI API (OPENAI_BASE_URL). */
export const GEN_AI_PROVIDER = 'openai';

/** A chat completion about to be requested: `chat {model}`, as the GenAI conventions name it. */
export function startChatSpan(
  parent: Context,
  baseUrl: string,
  request: { model: string; maxTokens: number; temperature: number | null },
): ClientSpan {
  let server: Attributes = {};
  try {
    server = serverAttributes(new URL(baseUrl));
  } catch {
    // Config checked the URL at start; nothing to say about the server otherwise.
  }
  return startClient(`chat ${request.model}`, parent, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': GEN_AI_PROVIDER,
    'gen_ai.request.model': request.model,
    'gen_ai.request.max_tokens': request.maxTokens,
    ...(request.temperature !== null ? { 'gen_ai.request.temperature': request.temperature } : {}),
    ...server,
  });
}

/** What a chat completion's stream said about itself, gathered chunk by chunk. */
export class ChatResponse {
  model: string | undefined;
  id: string | undefined;
  readonly finishReasons = new Set<string>();
  usage: { prompt_tokens?: number; completion_tokens?: number } | undefined;

  see(chunk: {
    id?: string;
    model?: string;
    choices?: { finish_reason?: string | null }[];
    usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  }): void {
    if (chunk.model) this.model = chunk.model;
    if (chunk.id) this.id = chunk.id;
    for (const choice of chunk.choices ?? []) if (choice.finish_reason) this.finishReasons.add(choice.finish_reason);
    if (chunk.usage) this.usage = chunk.usage;
  }
}

/** Ends a chat span with the response's model, finish reasons and token usage, or the error that stopped it. */
export function endChatSpan(span: Span, response: ChatResponse, error?: { type: string; message: string }): void {
  span.setAttributes({
    ...(response.model ? { 'gen_ai.response.model': response.model } : {}),
    ...(response.id ? { 'gen_ai.response.id': response.id } : {}),
    ...(response.finishReasons.size > 0 ? { 'gen_ai.response.finish_reasons': [...response.finishReasons] } : {}),
    ...(response.usage?.prompt_tokens !== undefined
      ? { 'gen_ai.usage.input_tokens': response.usage.prompt_tokens }
      : {}),
    ...(response.usage?.completion_tokens !== undefined
      ? { 'gen_ai.usage.output_tokens': response.usage.completion_tokens }
      : {}),
  });
  if (error) fail(span, error.type, error.message);
  span.end();
}

/** An agent's tool call: `execute_tool {name}` (INTERNAL: the tool runs here, its own calls out are children). */
export function startToolSpan(parent: Context, tool: { name: string; callId: string; type: string }): ClientSpan {
  const span = tracer().startSpan(
    `execute_tool ${tool.name}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': tool.name,
        'gen_ai.tool.call.id': tool.callId,
        'gen_ai.tool.type': tool.type,
      },
    },
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

/** The error.type of a failure: its code when it has one (ECONNREFUSED, a step error's), else its class. */
export function errorType(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string' && code) return code;
  return error instanceof Error ? error.constructor.name : '_OTHER';
}
