import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { isNonPublicAddress } from '../engine/steps/http';

/** A receiver has this long to answer (DESIGN §7.5). */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** Of the receiver's answer only the status matters; the rest is read up to this much and dropped. */
const MAX_REPLY_BYTES = 64 * 1024;

export interface SendResult { statusCode: number | null; error: string | null }

/** Resolves once and checks every address (the same guard as http steps); the request connects to exactly those. */
async function resolveAllowed(url: URL, allowPrivate: boolean): Promise<dns.LookupAddress[]> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = net.isIP(host) ? [{ address: host, family: net.isIP(host) }] : await dns.promises.lookup(host, { all: true, verbatim: true });
  if (addresses.length === 0) throw new Error(`cannot resolve ${host}`);
  if (!allowPrivate) {
    const refused = addresses.find((a) => isNonPublicAddress(a.address));
    if (refused) throw new Error(`refused: ${host} is a private, loopback or link-local address`);
  }
  return addresses;
}

/**
 * POSTs one signed message. Never throws: a refused target, a network failure or a timeout is an
 * `error`; any answer is its status code. Redirects are not followed.
 */
export async function sendWebhook(rawUrl: string, headers: Record<string, string>, body: string, allowPrivate: boolean): Promise<SendResult> {
  let url: URL;
  try {
    url = new URL(rawUrl);
    if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return { statusCode: null, error: `refused: ${url.protocol} URLs are not allowed` };
  } catch {
    return { statusCode: null, error: 'invalid URL' };
  }
  let addresses: dns.LookupAddress[];
  try {
    addresses = await resolveAllowed(url, allowPrivate);
  } catch (error) {
    const message = (error as Error).message;
    return { statusCode: null, error: message.startsWith('refused') ? message : `cannot resolve ${url.hostname}` };
  }
  const lookup = ((_host: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  }) as unknown as net.LookupFunction;
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    const req = transport.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'circuit-service-webhooks' },
      lookup,
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    }, (res) => {
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_REPLY_BYTES) res.destroy();
      });
      res.on('close', () => resolve({ statusCode: res.statusCode ?? null, error: null }));
      res.on('error', () => {});
    });
    req.on('error', (error: Error) => {
      resolve({ statusCode: null, error: error.name === 'AbortError' || error.name === 'TimeoutError' ? `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s` : `request failed: ${(error as NodeJS.ErrnoException).code ?? error.message}` });
    });
    req.end(body);
  });
}
