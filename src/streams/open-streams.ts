import type { Request } from 'express';
import { AppError } from '../errors';
import type { Authentication } from '../auth/authenticate';
import type { StreamAuthority } from '../auth/stream-authority';
import type { SharedTexts } from './paced-write';

/** What the stream transports share (ApiServices.streams, src/graphql/context.ts). */
export interface StreamServices {
  open: OpenStreams;
  authority: StreamAuthority;
  texts: SharedTexts;
}

/** Why the service ends a stream itself. */
export type StreamEnd = 'shutdown';

interface OpenStream {
  client: string;
  end(reason: StreamEnd): void;
}

/** Whose share a stream counts against: the token's user, else the client's address. */
export function streamClient(req: Pick<Request, 'ip'>, auth: Authentication): string {
  return auth.kind === 'token' ? `user:${auth.user.uid}` : `ip:${req.ip ?? 'unknown'}`;
}

/**
 * The event streams (REST SSE, graphql-sse) this API process holds open: at most `perClient` per
 * client and `total` in all (each refused with 429 RateLimited, the envelope of its surface), and the
 * list that a shutdown ends first (a final event, then close) so that open followers never hold a stop.
 */
export class OpenStreams {
  private readonly streams = new Set<OpenStream>();
  private readonly byClient = new Map<string, number>();
  private closing = false;

  constructor(private readonly limits: { perClient: number; total: number }) {}

  get size(): number {
    return this.streams.size;
  }

  /** Counts a stream of `client`, or throws RateLimited; the returned function releases it (once). */
  open(client: string, end: (reason: StreamEnd) => void): () => void {
    if (this.closing) throw new AppError('RateLimited', 'The service is stopping: try again shortly');
    const held = this.byClient.get(client) ?? 0;
    if (held >= this.limits.perClient)
      throw new AppError(
        'RateLimited',
        `Too many open event streams (at most ${this.limits.perClient} per client): close one first`,
      );
    if (this.streams.size >= this.limits.total)
      throw new AppError('RateLimited', 'Too many open event streams on this server: try again shortly');
    const stream: OpenStream = { client, end };
    this.streams.add(stream);
    this.byClient.set(client, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.streams.delete(stream);
      const left = (this.byClient.get(client) ?? 1) - 1;
      if (left > 0) this.byClient.set(client, left);
      else this.byClient.delete(client);
    };
  }

  /** Ends every open stream (and refuses new ones): each sends its final event and closes. */
  endAll(reason: StreamEnd): number {
    this.closing = true;
    const ended = [...this.streams];
    for (const stream of ended) {
      try {
        stream.end(reason);
      } catch {
        /* its connection is gone already */
      }
    }
    return ended.length;
  }
}
