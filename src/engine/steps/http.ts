import type dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { NetGuardError, pinnedLookup, resolvePublicTarget } from '../net-guard';
import { renderLeaves, templateFailure } from '../render';
import { templateField, templateLeavesField } from './field-schemas';
import { defineStepKind, sandboxLimits, StepError } from './types';

/** The SSRF guard lives in ../net-guard (webhooks use it too); re-exported for callers that found it here. */
export { isNonPublicAddress } from '../net-guard';

export const HTTP_STEP_TIMEOUT_MS = 30_000;
export const HTTP_STEP_MAX_BYTES = 1024 * 1024;
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;

function parseUrl(raw: string, stepId: string): URL {
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
    case 'ECONNREFUSED': return 'the connection was refused';
    case 'ECONNRESET': return 'the connection was reset';
    case 'ETIMEDOUT': case 'ESOCKETTIMEDOUT': return 'the connection timed out';
    case 'EHOSTUNREACH': case 'ENETUNREACH': return 'the host is unreachable';
    case 'EPROTO': case 'ERR_SSL_WRONG_VERSION_NUMBER': return 'the TLS handshake failed';
    default:
      if (error.code?.startsWith('ERR_TLS') || error.code?.includes('CERT')) return 'the TLS certificate was not accepted';
      return 'the connection failed';
  }
}

interface HttpReply { status: number; body: Buffer }

function send(url: URL, method: string, headers: Record<string, string>, body: string | undefined, addresses: dns.LookupAddress[], signal: AbortSignal, stepId: string): Promise<HttpReply> {
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
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', (error) => reject(error));
    });
    req.on('error', (error) => reject(error));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/**
 * `http`: calls a URL (templated url, headers and body string leaves). Refuses non-public targets
 * unless HTTP_STEP_ALLOW_PRIVATE; 1 MiB response limit; 30 s timeout; redirects are not followed; the
 * run's signal aborts it. Output: the JSON-parsed body, else its text. A non-2xx status fails the step.
 */
export const httpStep = defineStepKind({
  kind: 'http',
  durable: true,
  summary: 'Calls a URL; the output is the response body, parsed when it is JSON. A non-2xx answer fails the step. Only public addresses; 1 MiB, 30 s; redirects are not followed.',
  fields: {
    method: { enum: [...HTTP_METHODS], description: 'The HTTP method.', 'x-message': `must be one of ${HTTP_METHODS.join(', ')}` },
    url: templateField('The http or https URL.'),
    headers: {
      type: 'object',
      description: 'Request headers by name.',
      additionalProperties: templateField('A header value.'),
      'x-message': 'must be an object of string templates',
    },
    body: templateLeavesField('The request body: a string is sent as text, anything else as JSON. Ignored for GET and HEAD.'),
  },
  required: ['method', 'url'],
  async execute(step, ctx) {
    const method = String(step.method ?? 'GET').toUpperCase();
    if (!(HTTP_METHODS as readonly string[]).includes(method)) throw new StepError(step.id, `method must be one of ${HTTP_METHODS.join(', ')}`);
    if (typeof step.url !== 'string') throw new StepError(step.id, 'url must be a string');
    if (step.headers !== undefined && (typeof step.headers !== 'object' || step.headers === null || Array.isArray(step.headers))) {
      throw new StepError(step.id, 'headers must be an object');
    }
    const sendsBody = step.body !== undefined && step.body !== null && method !== 'GET' && method !== 'HEAD';
    let rendered: { url: string; headers?: Record<string, unknown>; body?: unknown };
    try {
      rendered = await renderLeaves({ url: step.url, headers: step.headers, ...(sendsBody ? { body: step.body } : {}) }, { input: ctx.input, steps: ctx.steps }, sandboxLimits(ctx)) as typeof rendered;
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

    let addresses: dns.LookupAddress[];
    try {
      addresses = await resolvePublicTarget(url, ctx.services.config.httpStepAllowPrivate);
    } catch (error) {
      throw new StepError(step.id, error instanceof NetGuardError ? error.message : 'the target could not be checked');
    }
    const timeout = AbortSignal.timeout(HTTP_STEP_TIMEOUT_MS);
    let reply: HttpReply;
    try {
      reply = await send(url, method, headers, body, addresses, AbortSignal.any([ctx.signal, timeout]), step.id);
    } catch (error) {
      if (error instanceof StepError) throw error;
      if (ctx.signal.aborted) throw new StepError(step.id, `request to ${url.host} was stopped: the run ended`);
      if (timeout.aborted) throw new StepError(step.id, `request to ${url.host} timed out after ${HTTP_STEP_TIMEOUT_MS / 1000} s`);
      throw new StepError(step.id, `request to ${url.host} failed: ${connectionFailure(error as Error)}`);
    }
    if (reply.status < 200 || reply.status > 299) throw new StepError(step.id, `upstream answered ${reply.status}`);
    const text = reply.body.toString('utf8');
    let output: unknown = text;
    if (text.trim() !== '') {
      try { output = JSON.parse(text); } catch { /* text */ }
    }
    return { output, credits: 0 };
  },
  describe: (step, say) => `Calls ${String(step.method)} ${say.quote(String(step.url))} and reads the response`,
});
