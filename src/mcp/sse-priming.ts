import crypto from 'node:crypto';
import type { Response } from 'express';

/** How long a client waits before reconnecting a closed stream (the SSE `retry` field). */
export const SSE_RETRY_MS = 2_000;

type RawHeaders = Record<string, unknown> | unknown[];

/** The headers argument of a `writeHead(status, [message], [headers])` call. */
const headersArg = (args: unknown[]): RawHeaders | undefined =>
  args.find((arg, index): arg is RawHeaders => index > 0 && typeof arg === 'object' && arg !== null);

/** Removes a header from a `writeHead` headers argument (an object, flat pairs or [name, value] pairs) and returns its value. */
function takeHeader(headers: RawHeaders | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  if (Array.isArray(headers)) {
    const nested = Array.isArray(headers[0]);
    const step = nested ? 1 : 2;
    for (let i = 0; i < headers.length; i += step) {
      const [key, value] = nested ? (headers[i] as unknown[]) : [headers[i], headers[i + 1]];
      if (String(key).toLowerCase() === name) {
        headers.splice(i, step);
        return String(value);
      }
    }
    return undefined;
  }
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === name) {
      const value = headers[key];
      delete headers[key];
      return String(value);
    }
  }
  return undefined;
}

/**
 * Opens every SSE answer on this response with a priming event (an id and empty data) carrying `retry`,
 * as the streamable HTTP transport recommends; neither SDK sends one for a stateless server (it needs an
 * event store, which a stateless server has none of). Clients that cannot parse an empty event skip it.
 */
export function primeEventStream(res: Response, retryMs: number = SSE_RETRY_MS): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
  res.writeHead = ((...args: unknown[]) => {
    const headers = headersArg(args);
    const type = takeHeader(headers, 'content-type') ?? String(res.getHeader('content-type') ?? '');
    if (type) {
      if (headers && !Array.isArray(headers)) headers['content-type'] = type;
      else res.setHeader('content-type', type);
    }
    if (!/^text\/event-stream/i.test(type)) return writeHead(...args);
    // The priming event lengthens a body whose length an adapter may have counted already.
    takeHeader(headers, 'content-length');
    res.removeHeader('content-length');
    const result = writeHead(...args);
    res.write(`id: ${crypto.randomUUID()}\nretry: ${retryMs}\ndata: \n\n`);
    return result;
  }) as Response['writeHead'];
}
