import crypto from 'node:crypto';
import type { Express, Request as ExpressRequest, Response as ExpressResponse } from 'express';
import type { ExecutionResult, GraphQLError, GraphQLSchema } from 'graphql';
import { createHandler, Request as SseRequest, Response as SseResponse } from 'graphql-sse';
import { authenticate, Authentication } from '../auth/authenticate';
import { buildContext } from '../graphql/context';
import { toPublicError } from '../graphql/format-error';
import { AppError, unauthorized, type ErrorCode } from '../errors';
import { ERROR_STATUS } from '../error-status';
import type { ApiServices } from '../graphql/context';
import { prepareOperation } from '../graphql/prepare-operation';
import { streamClient } from '../streams/open-streams';
import { takeValue, writePaced } from '../streams/paced-write';

export const GRAPHQL_STREAM_PATH = '/graphql/stream';

/** Streams (reserved or connected) at once per user with a token. */
export const MAX_STREAMS_PER_USER = 10;
/** Streams at once per anonymous client address, and for all anonymous clients together. */
export const MAX_STREAMS_PER_ANONYMOUS_CLIENT = 2;
export const MAX_ANONYMOUS_STREAMS = 200;
/** Operations at once in one single-connection stream. */
export const MAX_OPERATIONS_PER_STREAM = 50;

const TOKEN_HEADER = 'x-graphql-event-stream-token';

interface Reservation {
  client: string;
  anonymous: boolean;
  operations: number;
  connected: boolean;
  expiry?: NodeJS.Timeout;
}

interface Raw {
  req: ExpressRequest;
  auth: Authentication;
}

/** A JSON answer with the errors reduced to public codes; the status is the first error's. */
function jsonResponse(...errors: GraphQLError[]): SseResponse {
  const reduced = errors.map((error) => toPublicError(error));
  return [
    JSON.stringify({ errors: reduced.map(({ message, code }) => ({ message, extensions: { code } })) }),
    {
      status: ERROR_STATUS[reduced[0].code],
      statusText: '',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    },
  ];
}

/** What graphql-sse answers without a message of its own, by status. */
const PROTOCOL_MESSAGES: Record<number, string> = {
  404: 'No such stream: send Accept: text/event-stream to stream one operation, or reserve a stream with PUT and name it in the X-GraphQL-Event-Stream-Token header',
  405: 'Method not allowed here: GET or POST an operation, PUT to reserve a stream, DELETE to end one of its operations',
  406: 'Not acceptable: an operation streams with Accept: text/event-stream; a reserved stream takes Accept: application/json for its operations and text/plain for PUT',
};

/** The code each protocol refusal carries; a status with no code of its own is a bad request. */
function protocolCode(status: number): ErrorCode {
  return (
    (Object.entries(ERROR_STATUS).find(([, mapped]) => mapped === status)?.[0] as ErrorCode | undefined) ??
    'BadClientData'
  );
}

/**
 * graphql-sse's own refusals (no stream, a wrong method, an unparsable request) in the error shape of
 * /graphql: every error with a message and `extensions.code`, where the library sends an empty body or
 * errors without codes. Its statuses (and `Allow`) stay: they are the protocol's.
 */
function withCodes(
  body: string | null,
  init: ResponseInit & { status: number },
): [string, ResponseInit & { status: number }] {
  let errors: { message?: unknown; extensions?: Record<string, unknown> }[] = [];
  try {
    const parsed = body ? (JSON.parse(body) as { errors?: unknown }) : undefined;
    if (Array.isArray(parsed?.errors)) errors = parsed.errors as typeof errors;
  } catch {
    /* a text body: replaced below */
  }
  if (!errors.length)
    errors = [{ message: PROTOCOL_MESSAGES[init.status] ?? (body || init.statusText || 'Bad request') }];
  const code = protocolCode(init.status);
  const coded = errors.map((error) => ({ ...error, extensions: { code, ...error.extensions } }));
  return [
    JSON.stringify({ errors: coded }),
    {
      ...init,
      headers: {
        ...(init.headers as Record<string, string> | undefined),
        'content-type': 'application/json; charset=utf-8',
      },
    },
  ];
}

/**
 * GraphQL over SSE (graphql-sse protocol) at /graphql/stream, on the same schema, context and error
 * model as /graphql. A thin adapter around graphql-sse's framework-free handler, like its own
 * express adapter but: the body comes only from the shared, size-limited JSON parser (never read
 * here); an invalid bearer token is 401 JSON before any stream opens; single-connection reservations
 * are bounded per client and expire unless connected. Mount it before /graphql, which would
 * otherwise claim the path as a prefix.
 */
export function mountGraphqlStream(app: Express, schema: GraphQLSchema, services: ApiServices): { close(): void } {
  const reservations = new Map<string, Reservation>();
  const byClient = new Map<string, number>();
  let anonymous = 0;

  const release = (token: string) => {
    const reservation = reservations.get(token);
    if (!reservation) return;
    clearTimeout(reservation.expiry);
    reservations.delete(token);
    const left = (byClient.get(reservation.client) ?? 1) - 1;
    if (left > 0) byClient.set(reservation.client, left);
    else byClient.delete(reservation.client);
    if (reservation.anonymous) anonymous--;
  };

  const handler = createHandler<Raw, Record<string, never>>({
    schema,
    // Operations are validated in onSubscribe (with the service's own rules); graphql-sse would repeat it.
    validate: () => [],
    authenticate: async (req) => {
      const raw = req.raw as Raw | undefined;
      if (!raw) return (req.headers.get(TOKEN_HEADER) ?? undefined) as string | undefined; // expiry sweep
      if (raw.auth.kind === 'invalid') return jsonResponse(unauthorized(raw.auth.message));
      if (req.method === 'PUT') return reserve(raw);
      const token = req.headers.get(TOKEN_HEADER) ?? new URL(req.url, 'http://localhost').searchParams.get('token');
      return token || undefined;
    },
    onSubscribe: async (req, params) => {
      const raw = req.raw;
      const token = req.headers.get(TOKEN_HEADER);
      const reservation = token ? reservations.get(token) : undefined;
      if (reservation && reservation.operations >= MAX_OPERATIONS_PER_STREAM) {
        return jsonResponse(
          new AppError('RateLimited', `At most ${MAX_OPERATIONS_PER_STREAM} operations at once in one stream`),
        );
      }
      const context = await buildContext(services, raw.req, raw.auth);
      const prepared = prepareOperation(schema, params, context, {
        maxCost: services.config.graphqlMaxCost,
        maxTokens: services.config.graphqlMaxTokens,
      });
      if ('errors' in prepared) {
        return req.headers.get('accept') === 'text/event-stream'
          ? ({ data: null, errors: prepared.errors } as ExecutionResult)
          : jsonResponse(...prepared.errors);
      }
      if (reservation) reservation.operations++;
      // graphql-sse types contextValue as a plain record; ours is the AppContext interface.
      return prepared.args as never;
    },
    onComplete: (_ctx, req) => {
      const token = req.headers.get(TOKEN_HEADER);
      const reservation = token ? reservations.get(token) : undefined;
      if (reservation && reservation.operations > 0) reservation.operations--;
    },
    onNext: (_ctx, _req, result) => {
      const errors = (result as ExecutionResult).errors;
      if (!errors?.length) return;
      return {
        ...result,
        errors: errors.map((error) => {
          const publicError = toPublicError(error as GraphQLError);
          if (publicError.code === 'Internal')
            services.log.error({ err: publicError.internal ?? error }, 'internal error in GraphQL stream');
          const { locations, path } = error as GraphQLError;
          return {
            message: publicError.message,
            locations,
            path,
            extensions: { code: publicError.code },
          } as unknown as GraphQLError;
        }),
      } as ExecutionResult;
    },
  });

  function reserve({ req, auth }: Raw): string | SseResponse {
    const anonymousClient = auth.kind !== 'token';
    const client = auth.kind === 'token' ? `user:${auth.user.uid}` : `ip:${req.ip ?? 'unknown'}`;
    const limit = anonymousClient ? MAX_STREAMS_PER_ANONYMOUS_CLIENT : MAX_STREAMS_PER_USER;
    if ((byClient.get(client) ?? 0) >= limit || (anonymousClient && anonymous >= MAX_ANONYMOUS_STREAMS)) {
      return jsonResponse(
        new AppError('RateLimited', `Too many open or reserved streams (at most ${limit} per client): close one first`),
      );
    }
    // The stream token is always the server's: a client never names (or guesses) another's stream.
    const token = crypto.randomUUID();
    const reservation: Reservation = { client, anonymous: anonymousClient, operations: 0, connected: false };
    reservation.expiry = setTimeout(() => void expire(token), services.config.streamReservationTtlMs).unref();
    reservations.set(token, reservation);
    byClient.set(client, (byClient.get(client) ?? 0) + 1);
    if (anonymousClient) anonymous++;
    return token;
  }

  /** Removes a reservation nobody connected to: connects to it internally and closes it at once. */
  async function expire(token: string): Promise<void> {
    const reservation = reservations.get(token);
    if (!reservation || reservation.connected) return;
    release(token);
    const sweep: SseRequest<Raw, Record<string, never>> = {
      method: 'GET',
      url: GRAPHQL_STREAM_PATH,
      body: null,
      raw: undefined as unknown as Raw,
      context: {},
      headers: {
        get: (key) => (({ accept: 'text/event-stream', [TOKEN_HEADER]: token }) as Record<string, string>)[key],
      },
    };
    try {
      const [body] = await handler(sweep);
      if (body && typeof body !== 'string') await body.return(undefined);
    } catch (error) {
      services.log.warn({ err: error }, 'could not remove an expired GraphQL stream reservation');
    }
  }

  app.use(GRAPHQL_STREAM_PATH, async (req: ExpressRequest, res: ExpressResponse) => {
    try {
      const raw: Raw = { req, auth: await authenticate(services.tokenCache, req.headers.authorization) };
      const [body, init] = await handler({
        method: req.method,
        url: req.originalUrl,
        headers: {
          get: (key) => {
            const value = req.headers[key];
            return Array.isArray(value) ? value.join('\n') : value;
          },
        },
        // Parsed (size-limited, checked) by the shared JSON parser; never read from the socket here.
        body: (req.body as Record<string, unknown> | undefined) ?? null,
        raw,
        context: {},
      });
      let releaseSlot: (() => void) | undefined;
      if (body && typeof body !== 'string') {
        try {
          // Counted against the client's and the server's stream caps; a shutdown completes it and closes.
          releaseSlot = services.streams?.open.open(streamClient(req, raw.auth), () => {
            if (!res.writableEnded) res.end('event: complete\ndata:\n\n');
            void body.return(undefined);
          });
        } catch (error) {
          void body.return(undefined);
          const [refusal, refused] = jsonResponse(error as AppError);
          res.writeHead(refused.status, refused.headers);
          return void res.end(refusal);
        }
      }
      if (init.status >= 400 && (!body || typeof body === 'string')) {
        const [refusal, refused] = withCodes(body, init);
        res.writeHead(refused.status, refused.statusText || undefined, refused.headers as Record<string, string>);
        return void res.end(refusal);
      }
      res.writeHead(init.status, init.statusText || undefined, init.headers);
      if (!body || typeof body === 'string') return void res.end(body);
      const token = req.headers[TOKEN_HEADER];
      const reservation = typeof token === 'string' && init.status === 200 ? reservations.get(token) : undefined;
      if (reservation) {
        reservation.connected = true;
        clearTimeout(reservation.expiry);
      }
      res.once('close', () => {
        releaseSlot?.();
        void body.return(undefined);
        if (reservation && typeof token === 'string') release(token);
      });
      for (;;) {
        const next = await body.next();
        if (next.done || !res.writable) break;
        // Paced: a large result is handed over slice by slice, one copy shared by all readers.
        if (!(await writePaced(res, takeValue(next), services.streams?.texts))) break;
      }
      res.end();
    } catch (error) {
      req.log?.error({ err: error }, 'GraphQL stream failed');
      if (!res.headersSent)
        res.status(500).json({ errors: [{ message: 'Internal server error', extensions: { code: 'Internal' } }] });
      else res.end();
    }
  });

  return {
    close: () => {
      for (const token of [...reservations.keys()]) void expire(token);
    },
  };
}
