import { withTraceHeaders } from '../../telemetry/tracing';
import { endHttpClientSpan, errorType, startHttpClientSpan } from '../../telemetry/client-spans';
import type dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isNonPublicAddress, NetGuardError, pinnedLookup, resolvePublicTarget } from '../net-guard';
import { renderLeaves, templateFailure } from '../render';
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
import { stepPolicyFields, templateField, templateLeavesField } from './field-schemas';
import { defineStepKind, sandboxCall, StepError, throughGate, templateScope, type StepContext } from './types';

/** The SSRF guard lives in ../net-guard (webhooks use it too); re-exported for callers that found it here. */
export { isNonPublicAddress } from '../net-guard';

/** The default per-attempt timeout (a step's `timeout_ms` overrides it). */
export const HTTP_STEP_TIMEOUT_MS = STEP_POLICY_DEFAULTS.http.timeoutMs!;
/** How much of a non-2xx answer's body the failure message quotes. */
export const UPSTREAM_EXCERPT_CHARS = 200;
export const HTTP_STEP_MAX_BYTES = 1024 * 1024;
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;

export function parseUrl(raw: string, stepId: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new StepError(stepId, `url is not a valid URL: ${raw.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new StepError(stepId, 'url must be http or https');
  if (url.username || url.password) throw new StepError(stepId, 'url must not carry credentials');
  return url;
}

/** Why a connection failed, in words that name no address (the error's own text may carry the resolved IP). */
function connectionFailure(error: Error & { code?: string }): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'the connection was refused';
    case 'ECONNRESET':
      return 'the connection was reset';
    case 'ETIMEDOUT':
    case 'ESOCKETTIMEDOUT':
      return 'the connection timed out';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'the host is unreachable';
    case 'EPROTO':
    case 'ERR_SSL_WRONG_VERSION_NUMBER':
      return 'the TLS handshake failed';
    default:
      if (error.code?.startsWith('ERR_TLS') || error.code?.includes('CERT'))
        return 'the TLS certificate was not accepted';
      return 'the connection failed';
  }
}

export interface HttpReply {
  status: number;
  body: Buffer;
  retryAfter?: string;
}

const IPV4 = /\b\d{1,3}(?:\.\d{1,3}){3}\b/g;

/**
 * The start of what an upstream answered, as one line of text for a failure message: control
 * characters removed, non-public IPv4 addresses masked, at most UPSTREAM_EXCERPT_CHARS characters.
 */
export function bodyExcerpt(body: Buffer): string {
  const text = body
    .subarray(0, UPSTREAM_EXCERPT_CHARS * 4)
    .toString('utf8')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufffd]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(IPV4, (address) => (isNonPublicAddress(address) ? '[address]' : address));
  const chars = Array.from(text);
  return chars.length > UPSTREAM_EXCERPT_CHARS ? `${chars.slice(0, UPSTREAM_EXCERPT_CHARS - 1).join('')}…` : text;
}

function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  addresses: dns.LookupAddress[],
  signal: AbortSignal,
  stepId: string,
): Promise<HttpReply> {
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(url, { method, headers, lookup: pinnedLookup(addresses), signal }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > HTTP_STEP_MAX_BYTES) {
          req.destroy();
          reject(new StepError(stepId, `the response is larger than ${HTTP_STEP_MAX_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => {
        const retryAfter = res.headers['retry-after'];
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks),
          ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
        });
      });
      res.on('error', (error) => reject(error));
      // Aborted mid-body (timeout, run ended): 'end' never comes.
      res.on('close', () => {
        if (!res.complete) reject(Object.assign(new Error('the response was cut off'), { code: 'ECONNRESET' }));
      });
    });
    req.on('error', (error) => reject(error));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** A request to make: the url parsed and checked (parseUrl), the headers lower-cased, the body serialized. */
export interface UpstreamRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
}

/** The guard refused the target (not a public address, or it does not resolve): not worth another attempt. */
export class TargetRefused extends StepError {}

/**
 * One attempt at an upstream request under the http step's guards: the target resolved and checked for
 * each attempt (only public addresses unless HTTP_STEP_ALLOW_PRIVATE), 1 MiB of response at most, the
 * attempt's signal (timeout, run end). A non-2xx answer is an AttemptError quoting the start of the body,
 * retryable for RETRYABLE_STATUSES. Shared by the `http` step and the `agent` step's http tools.
 */
export async function attemptRequest(
  stepId: string,
  ctx: Pick<StepContext, 'deps' | 'signal' | 'trace'>,
  attempt: Attempt,
  request: UpstreamRequest,
): Promise<HttpReply> {
  const { url, method, headers, body } = request;
  // Resolved for each attempt: the answer may change between attempts, and it is checked each time.
  let addresses: dns.LookupAddress[];
  try {
    addresses = await resolvePublicTarget(url, ctx.deps.config.httpStepAllowPrivate);
  } catch (error) {
    throw new TargetRefused(stepId, error instanceof NetGuardError ? error.message : 'the target could not be checked');
  }
  let answer: HttpReply;
  // A CLIENT span per attempt; the request's traceparent names it, so the upstream's spans are its children.
  const client = ctx.trace ? startHttpClientSpan(ctx.trace.context, method, url) : undefined;
  try {
    answer = await send(
      url,
      method,
      withTraceHeaders(headers, client?.context ?? ctx.trace?.context),
      body,
      addresses,
      attempt.signal,
      stepId,
    );
    if (client) endHttpClientSpan(client.span, { status: answer.status });
  } catch (error) {
    if (client) endHttpClientSpan(client.span, { error: attempt.timedOut() ? 'timeout' : errorType(error) });
    if (error instanceof StepError) throw error;
    if (ctx.signal.aborted) throw new StepError(stepId, `request to ${url.host} was stopped: the run ended`);
    if (attempt.timedOut()) {
      throw new AttemptError(
        stepId,
        `request to ${url.host} timed out after ${formatDuration(attempt.timeoutMs!)} (timeout_ms per attempt)`,
        { retryable: true },
      );
    }
    throw new AttemptError(stepId, `request to ${url.host} failed: ${connectionFailure(error as Error)}`, {
      retryable: true,
    });
  }
  if (answer.status < 200 || answer.status > 299) {
    const summary = `upstream answered ${answer.status}`;
    const said = bodyExcerpt(answer.body);
    const retryable = RETRYABLE_STATUSES.has(answer.status);
    throw new AttemptError(stepId, said ? `${summary}: ${said}` : summary, {
      retryable,
      summary,
      ...(retryable ? { retryAfterMs: parseRetryAfter(answer.retryAfter) } : {}),
    });
  }
  return answer;
}

/** A 2xx answer's body as a step output: parsed when it is JSON, else its text. */
export function replyOutput(reply: HttpReply): unknown {
  const text = reply.body.toString('utf8');
  if (text.trim() === '') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * `http`: calls a URL (templated url, headers and body string leaves). Refuses non-public targets
 * unless HTTP_STEP_ALLOW_PRIVATE; 1 MiB response limit; 30 s per attempt unless `timeout_ms`; one attempt
 * unless `retry`; redirects are not followed; the run's signal aborts it. Output: the
 * JSON-parsed body, else its text. A non-2xx status fails the step, quoting the start of the body.
 */
export const httpStep = defineStepKind({
  kind: 'http',
  durable: true,
  summary:
    'Calls a URL; the output is the response body, parsed when it is JSON. A non-2xx answer fails the step. Only public addresses; 1 MiB, 30 s per attempt; redirects are not followed; retry and timeout_ms set the step policy.',
  fields: {
    method: {
      enum: [...HTTP_METHODS],
      description: 'The HTTP method.',
      'x-message': `must be one of ${HTTP_METHODS.join(', ')}`,
    },
    url: templateField('The http or https URL.'),
    headers: {
      type: 'object',
      description: 'Request headers by name.',
      additionalProperties: templateField('A header value.'),
      'x-message': 'must be an object of string templates',
    },
    body: templateLeavesField(
      'The request body: a string is sent as text, anything else as JSON. Ignored for GET and HEAD.',
    ),
    ...stepPolicyFields('http'),
  },
  required: ['method', 'url'],
  async execute(step, ctx) {
    const method = String(step.method ?? 'GET').toUpperCase();
    if (!(HTTP_METHODS as readonly string[]).includes(method))
      throw new StepError(step.id, `method must be one of ${HTTP_METHODS.join(', ')}`);
    if (typeof step.url !== 'string') throw new StepError(step.id, 'url must be a string');
    if (
      step.headers !== undefined &&
      (typeof step.headers !== 'object' || step.headers === null || Array.isArray(step.headers))
    ) {
      throw new StepError(step.id, 'headers must be an object');
    }
    const sendsBody = step.body !== undefined && step.body !== null && method !== 'GET' && method !== 'HEAD';
    let rendered: { url: string; headers?: Record<string, unknown>; body?: unknown };
    try {
      rendered = (await renderLeaves(
        { url: step.url, headers: step.headers, ...(sendsBody ? { body: step.body } : {}) },
        templateScope(ctx),
        sandboxCall(ctx),
      )) as typeof rendered;
    } catch (error) {
      throw new StepError(step.id, templateFailure(error));
    }
    const url = parseUrl(rendered.url, step.id);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(rendered.headers ?? {})) headers[name.toLowerCase()] = String(value);
    let body: string | undefined;
    if (sendsBody) {
      if (typeof rendered.body === 'string') {
        body = rendered.body;
        headers['content-type'] ??= 'text/plain; charset=utf-8';
      } else {
        body = JSON.stringify(rendered.body);
        headers['content-type'] ??= 'application/json';
      }
    }
    headers['user-agent'] ??= 'circuit-service';

    return throughGate(ctx, { method, url: url.href, headers, body: body ?? null }, async () => {
      const policy = parseStepPolicy(step, 'http');
      const reply = await withStepPolicy(step, ctx, policy, (attempt) =>
        attemptRequest(step.id, ctx, attempt, { method, url, headers, body }),
      );
      return { output: replyOutput(reply), credits: 0 };
    });
  },
  describe: (step, say) => `Calls ${String(step.method)} ${say.quote(String(step.url))} and reads the response`,
});
