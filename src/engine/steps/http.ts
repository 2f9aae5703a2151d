import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { renderLeaves, renderTemplate } from '../render';
import { StepError, type StepExecutor } from './types';

export const HTTP_STEP_TIMEOUT_MS = 30_000;
export const HTTP_STEP_MAX_BYTES = 1024 * 1024;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];

/** Private, loopback, link-local, multicast and otherwise non-public ranges an http step may not reach. */
const blocked = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96], ['100::', 64],
] as const) blocked.addSubnet(network, prefix, 'ipv6');

/** True when `address` is not a public unicast address. IPv4-mapped IPv6 is judged by its IPv4 part. */
export function isNonPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blocked.check(mapped[1], 'ipv4');
    if (/^::ffff:/i.test(address)) return true;
    return blocked.check(address, 'ipv6');
  }
  return true;
}

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

/**
 * Resolves the host once and checks every address it has; the request then connects to exactly those
 * addresses (no second lookup that DNS rebinding could answer differently).
 */
async function resolveAllowed(url: URL, allowPrivate: boolean, stepId: string): Promise<dns.LookupAddress[]> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: dns.LookupAddress[];
  try {
    addresses = net.isIP(host) ? [{ address: host, family: net.isIP(host) }] : await dns.promises.lookup(host, { all: true, verbatim: true });
  } catch {
    throw new StepError(stepId, `cannot resolve ${host}`);
  }
  if (addresses.length === 0) throw new StepError(stepId, `cannot resolve ${host}`);
  if (!allowPrivate) {
    const refused = addresses.find((a) => isNonPublicAddress(a.address));
    if (refused) throw new StepError(stepId, `refusing to call ${host}: ${refused.address} is a private, loopback or link-local address`);
  }
  return addresses;
}

function pinnedLookup(addresses: dns.LookupAddress[]): net.LookupFunction {
  return ((_hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  }) as unknown as net.LookupFunction;
}

interface HttpReply { status: number; contentType: string; body: Buffer }

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
          reject(new StepError(stepId, `response is larger than ${HTTP_STEP_MAX_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks) }));
      res.on('error', (error) => reject(error));
    });
    req.on('error', (error) => reject(error));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/**
 * `http`: calls a URL (templated url, headers and body string leaves). Refuses non-public targets
 * unless HTTP_STEP_ALLOW_PRIVATE; 1 MiB response limit; 30 s timeout; redirects are not followed.
 * Output: the JSON-parsed body, else its text. A non-2xx status fails the step.
 */
export const httpStep: StepExecutor = async (step, ctx) => {
  const method = String(step.method ?? 'GET').toUpperCase();
  if (!METHODS.includes(method)) throw new StepError(step.id, `method must be one of ${METHODS.join(', ')}`);
  if (typeof step.url !== 'string') throw new StepError(step.id, 'url must be a string');
  const scope = { input: ctx.input, steps: ctx.steps };
  const url = parseUrl(renderTemplate(step.url, scope), step.id);

  const headers: Record<string, string> = {};
  if (step.headers !== undefined) {
    if (typeof step.headers !== 'object' || step.headers === null || Array.isArray(step.headers)) throw new StepError(step.id, 'headers must be an object');
    for (const [name, value] of Object.entries(renderLeaves(step.headers, scope) as Record<string, unknown>)) headers[name.toLowerCase()] = String(value);
  }
  let body: string | undefined;
  if (step.body !== undefined && step.body !== null && method !== 'GET' && method !== 'HEAD') {
    const rendered = renderLeaves(step.body, scope);
    if (typeof rendered === 'string') {
      body = rendered;
      headers['content-type'] ??= 'text/plain; charset=utf-8';
    } else {
      body = JSON.stringify(rendered);
      headers['content-type'] ??= 'application/json';
    }
  }
  headers['user-agent'] ??= 'circuit-service';

  const addresses = await resolveAllowed(url, ctx.services.config.httpStepAllowPrivate, step.id);
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(HTTP_STEP_TIMEOUT_MS)]);
  let reply: HttpReply;
  try {
    reply = await send(url, method, headers, body, addresses, signal, step.id);
  } catch (error) {
    if (error instanceof StepError) throw error;
    const e = error as Error;
    throw new StepError(step.id, e.name === 'AbortError' || e.name === 'TimeoutError' ? `request to ${url.host} timed out or was cancelled` : `request to ${url.host} failed: ${e.message}`);
  }
  if (reply.status < 200 || reply.status > 299) throw new StepError(step.id, `${method} ${url.host}${url.pathname} answered HTTP ${reply.status}`);
  const text = reply.body.toString('utf8');
  let output: unknown = text;
  if (text.trim() !== '') {
    try { output = JSON.parse(text); } catch { /* text */ }
  }
  return { output, credits: 0 };
};
