import type dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { NetGuardError, pinnedLookup, resolvePublicTarget } from '../engine/net-guard';

/** A receiver has this long to answer. */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** Of the receiver's answer only the status matters; the rest is read up to this much and dropped. */
const MAX_REPLY_BYTES = 64 * 1024;

export interface SendResult {
  statusCode: number | null;
  error: string | null;
}

/**
 * POSTs one signed message. Never throws: a refused target, a network failure or a timeout is an
 * `error`; any answer is its status code. Redirects are not followed.
 */
export async function sendWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  allowPrivate: boolean,
): Promise<SendResult> {
  let url: URL;
  try {
    url = new URL(rawUrl);
    if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:'))
      return { statusCode: null, error: `refused: ${url.protocol} URLs are not allowed` };
  } catch {
    return { statusCode: null, error: 'invalid URL' };
  }
  // The SSRF guard of http steps: resolved once, every address checked, the request pinned to them.
  let addresses: dns.LookupAddress[];
  try {
    addresses = await resolvePublicTarget(url, allowPrivate);
  } catch (error) {
    const message = error instanceof NetGuardError ? error.message : `cannot resolve ${url.hostname}`;
    return { statusCode: null, error: message.startsWith('refusing') ? `refused: ${message}` : message };
  }
  const lookup = pinnedLookup(addresses);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    const req = transport.request(
      url,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'circuit-service-webhooks',
        },
        lookup,
        signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      },
      (res) => {
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_REPLY_BYTES) res.destroy();
        });
        res.on('close', () => resolve({ statusCode: res.statusCode ?? null, error: null }));
        res.on('error', () => {});
      },
    );
    req.on('error', (error: Error) => {
      resolve({
        statusCode: null,
        error:
          error.name === 'AbortError' || error.name === 'TimeoutError'
            ? `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s`
            : `request failed: ${(error as NodeJS.ErrnoException).code ?? error.message}`,
      });
    });
    req.end(body);
  });
}
