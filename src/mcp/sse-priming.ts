import crypto from 'node:crypto';
import type { Response } from 'express';

/** How long a client waits before reconnecting a closed stream (the SSE `retry` field). */
export const SSE_RETRY_MS = 2_000;

/** The content type a `writeHead(status, [message], [headers])` call sends. */
function contentType(res: Response, args: unknown[]): string {
  const headers = args.find((arg, index) => index > 0 && typeof arg === 'object' && arg !== null);
  if (Array.isArray(headers)) {
    const pairs: unknown[] = Array.isArray(headers[0]) ? headers.flat() : headers;
    for (let i = 0; i + 1 < pairs.length; i += 2)
      if (String(pairs[i]).toLowerCase() === 'content-type') return String(pairs[i + 1]);
  } else if (headers) {
    for (const [name, value] of Object.entries(headers))
      if (name.toLowerCase() === 'content-type') return String(value);
  }
  return String(res.getHeader('content-type') ?? '');
}

/**
 * Opens every SSE answer on this response with a priming event (an id and empty data) carrying `retry`,
 * as the streamable HTTP transport recommends; neither SDK sends one for a stateless server (it needs an
 * event store, which a stateless server has none of). Clients that cannot parse an empty event skip it.
 */
export function primeEventStream(res: Response, retryMs: number = SSE_RETRY_MS): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
  let primed = false;
  res.writeHead = ((...args: unknown[]) => {
    const result = writeHead(...args);
    if (!primed && /^text\/event-stream/i.test(contentType(res, args))) {
      primed = true;
      res.write(`id: ${crypto.randomUUID()}\nretry: ${retryMs}\ndata: \n\n`);
    }
    return result;
  }) as Response['writeHead'];
}
