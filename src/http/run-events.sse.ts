import type { Express, Request, Response } from 'express';
import { QueryTypes } from 'sequelize';
import { subscribe, type DocumentNode, type ExecutionResult, type GraphQLError, type GraphQLSchema } from 'graphql';
import { buildContext } from '../graphql/context';
import { toPublicError } from '../graphql/format-error';
import { errorResponse } from '../../rest-bridge/bridge';
import { API_PREFIX } from '../../rest-bridge/express';
import { RUN_OPTIONAL_FIELDS } from '../domain/runs';
import { RUN_EVENT_KINDS, type RunEventKind } from '../models/RunEvent';
import { AppError } from '../errors';
import { omitNulls } from '../omit-nulls';
import type { ApiServices } from '../graphql/context';
import type { Authentication } from '../auth/authenticate';
import { User } from '../models';
import { checkEventsSignature } from '../runs';
import { resolveSecret } from '../storage/secret';
import { streamClient } from '../streams/open-streams';
import { writePaced } from '../streams/paced-write';

export const RUN_EVENTS_PATH = `${API_PREFIX}/circuit-runs/:uid/events`;

interface RestRunEvent {
  seq: number;
  kind: RunEventKind;
  run: Record<string, unknown> | null;
  data: Record<string, unknown> | null;
}

/** `?events=state,step,output` (default `state`). */
function requestedKinds(raw: unknown): RunEventKind[] {
  if (raw === undefined || raw === '') return ['state'];
  if (typeof raw !== 'string')
    throw new AppError('BadClientData', 'query parameter events must be given once', { field: 'events' });
  const kinds = [...new Set(raw.split(',').map((k) => k.trim()))];
  const unknown = kinds.filter((k) => !(RUN_EVENT_KINDS as readonly string[]).includes(k));
  if (unknown.length > 0 || kinds.length === 0) {
    throw new AppError('BadClientData', `events must be a comma-separated list of ${RUN_EVENT_KINDS.join(', ')}`, {
      field: 'events',
    });
  }
  return kinds as RunEventKind[];
}

/**
 * A signed URL (`?signature=…&expires=…[&reader=…]`, docs/typed-clients.md) reads as the reader it was made for,
 * instead of a bearer token; undefined when the request carries no signature. Expired: 401; tampered: 403.
 */
async function signedReader(
  services: ApiServices,
  uid: string,
  query: Request['query'],
): Promise<Authentication | undefined> {
  if (query.signature === undefined) return undefined;
  const check = checkEventsSignature(resolveSecret(services.config), uid, query);
  if (!check.ok) {
    throw check.reason === 'expired'
      ? new AppError('Unauthorized', 'The signed URL has expired; ask for a new one')
      : new AppError('NotAllowed', 'The signature of the URL is not valid');
  }
  if (!check.readerUid) return { kind: 'anonymous' };
  const user = await User.findByPk(check.readerUid);
  if (!user) throw new AppError('NotAllowed', 'The signature of the URL is not valid');
  if (!check.tokenUid) return { kind: 'token', user };
  // Signed with an API token: the URL is worth no more than that token, now and while its stream is open.
  const [token] = await services.sequelize.query<{ token_hash: string }>(
    `SELECT token_hash FROM api_tokens
      WHERE uid = $1 AND user_uid = $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
    { bind: [check.tokenUid, user.uid], type: QueryTypes.SELECT },
  );
  if (!token) throw new AppError('Unauthorized', 'The API token that signed this URL is revoked or expired');
  return { kind: 'token', user, tokenHash: token.token_hash };
}

/**
 * GET /api/v1/circuit-runs/{uid}/events (docs/runs.md, Event log): a text/event-stream framer over the
 * `circuitRunEvents` subscription (one source for REST and GraphQL). `id:` is the event's seq;
 * `event:` its kind; `data:` for state events exactly the GET /circuit-runs/{uid} payload (through the
 * same REST fragment), else the step/output event. Without `Last-Event-ID` the first event is the run
 * as it is now; with one, the log is replayed after it, then followed live. A client that has seen
 * everything of a terminal run gets 204 (an EventSource then stops reconnecting). Keep-alive comments
 * every SSE_KEEP_ALIVE_MS; the stream closes after the terminal state. Errors before the stream starts
 * are the JSON envelope (400/401/403/404).
 */
export function mountRunEvents(
  app: Express,
  schema: GraphQLSchema,
  operations: DocumentNode,
  services: ApiServices,
): void {
  app.get(RUN_EVENTS_PATH, async (req: Request, res: Response) => {
    res.locals.route = RUN_EVENTS_PATH;
    const uid = String(req.params.uid);
    const onInternal = (error: unknown) =>
      services.log.error({ err: error, route: RUN_EVENTS_PATH }, 'internal error in run events');
    const fail = (error: AppError | GraphQLError) => {
      const publicError = error instanceof AppError ? error : toPublicError(error);
      if (publicError.code === 'Internal') onInternal(error);
      const response = errorResponse(publicError);
      res.status(response.status).set(response.headers).json(response.body);
    };
    let iterator: AsyncIterator<ExecutionResult> | undefined;
    const timers: NodeJS.Timeout[] = [];
    let closed = false;
    let release: (() => void) | undefined;
    const finish = () => {
      if (closed) return;
      closed = true;
      release?.();
      for (const timer of timers) clearInterval(timer);
      void iterator?.return?.();
      if (!res.writableEnded) res.end();
    };
    req.on('close', finish);

    try {
      const kinds = requestedKinds(req.query.events);
      const start = await services.runs.streamStart(uid, kinds, req.headers['last-event-id']);
      // Without a signature, the bearer token as src/http/rest-authentication.ts already found it.
      const context = await buildContext(
        services,
        req,
        (await signedReader(services, uid, req.query)) ?? (res.locals.auth as Authentication | undefined),
      );
      const result = await subscribe({
        schema,
        document: operations,
        operationName: 'RestCircuitRunEvents',
        variableValues: { uid, after: start.after, kinds: kinds.map((k) => k.toUpperCase()) },
        contextValue: context,
      });
      if (!(Symbol.asyncIterator in result)) {
        closed = true;
        return fail(result.errors?.[0] ?? new AppError('Internal', 'Internal server error'));
      }
      iterator = result;
      const viewerKey = context.viewer ? `user:${context.viewer.uid}` : 'anonymous';
      if (closed) return finish();
      // Checked after the subscription: its read rules answer first (401/403/404).
      if (start.complete) {
        res.status(204);
        return finish();
      }

      // Counted against the client's and the server's stream caps (429 when over); a shutdown ends it with a last event.
      release = services.streams?.open.open(streamClient(req, context.auth), (reason) => {
        if (!res.headersSent || res.writableEnded) return finish();
        res.write(`event: ${reason}\ndata: {}\n\n`);
        finish();
      });
      res.status(200).set({
        ...context.responseHeaders,
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache, no-transform',
        Connection: 'keep-alive',
        'X-Accel-Buffering': 'no',
      });
      res.flushHeaders();
      res.write('retry: 1000\n\n');
      // Not while the reader has not taken what was sent: a paused reader's buffer stays as it is.
      timers.push(
        setInterval(() => {
          if (!closed && !res.writableNeedDrain) res.write(': keep-alive\n\n');
        }, services.config.sseKeepAliveMs),
      );

      const texts = services.streams?.texts;
      /**
       * The next event as the bytes to send, or null at the end. Its own frame is gone once it
       * returns: nothing of the presented run (a 4 MiB result) stays referenced while a reader is slow.
       */
      const nextEvent = async (source: AsyncIterator<ExecutionResult>) => {
        const next = await source.next();
        if (next.done || closed) return null;
        if (next.value.errors?.length) {
          onInternal(next.value.errors[0]);
          return null;
        }
        const event = (next.value.data as { circuitRunEvents: RestRunEvent }).circuitRunEvents;
        const kind = event.kind.toLowerCase();
        const data = kind === 'state' && event.run ? omitNulls(event.run, RUN_OPTIONAL_FIELDS) : event.data;
        const make = () => `id: ${event.seq}\nevent: ${kind}\ndata: ${JSON.stringify(data)}\n\n`;
        // The same event as the same viewer is the same text: made once for all its readers.
        return texts ? texts.byKey(`${uid}:${event.seq}:${viewerKey}`, make)() : make();
      };
      for (;;) {
        const bytes = await nextEvent(iterator);
        if (bytes === null) break;
        // Paced: a large event is handed over slice by slice, views of the one shared copy.
        if (!(await writePaced(res, () => bytes, texts))) break;
      }
      finish();
    } catch (error) {
      if (!res.headersSent) {
        closed = true;
        void iterator?.return?.();
        if (error instanceof AppError) return fail(error);
        onInternal(error);
        return fail(new AppError('Internal', 'Internal server error'));
      }
      onInternal(error);
      finish();
    }
  });
}
