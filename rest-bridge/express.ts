import express, { Express, NextFunction, Request, Response } from 'express';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import { buildContext } from '../src/graphql/context';
import type { ApiServices } from '../src/graphql/context';
import { WRITE_SLICE_BYTES, writePaced, type Held, type SharedTexts } from '../src/streams/paced-write';
import { errorResponse, runRoute, BridgeResponse } from './bridge';
import type { Route } from './route';
import { buildOpenApi } from './openapi';
import { compileRoute } from './validate';

export const API_PREFIX = '/api/v1';

/** Media types a body may come in: JSON (RFC 8259), also as a `+json` structured syntax suffix. */
export const JSON_TYPES = ['application/json', 'application/*+json'];

/** A request with content: `Content-Length: 0` (what clients send with an empty PUT) has none. */
function hasContent(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

type EtagFn = (body: Buffer | string, encoding: string) => string;

/** Where a route's answer bytes are kept for every request answered the same (AppContext.sharedAnswers), and under what key. */
interface KeptAnswer {
  answers: Map<string, Held>;
  key: string;
}

/**
 * The JSON of an answer: its text, or the bytes kept for every request answered the same (a route
 * that `sharesAnswer`, when its resolver offered a place): a large answer is then serialised once for
 * all of them, not once per request (60 paused readers of a 4 MiB run: one copy, no 4 MiB each of garbage).
 */
function jsonOf(body: unknown, kept: KeptAnswer | undefined): string | Held {
  const known = kept?.answers.get(kept.key);
  if (known) return known;
  const text = JSON.stringify(body);
  if (!kept || text.length <= WRITE_SLICE_BYTES) return text;
  const held: Held = { bytes: Buffer.from(text) };
  kept.answers.set(kept.key, held);
  return held;
}

/** The ETag Express gives these bytes (kept with shared bytes, so that it is computed once). */
function etagOf(req: Request, json: string | Held): string | undefined {
  const etagFn = req.app.get('etag fn') as EtagFn | undefined;
  if (!etagFn) return undefined;
  return typeof json === 'string' ? etagFn(json, 'utf8') : (json.etag ??= etagFn(json.bytes, 'utf8'));
}

/**
 * A JSON answer. A large one (a run with a 4 MiB result) is written with back-pressure, slice by slice
 * as the client takes it, from one copy shared by every request answering the same bytes
 * (src/paced-write.ts): a client that stops reading holds a slice, not the answer.
 */
function sendJson(req: Request, res: Response, json: string | Held, shared: SharedTexts | undefined): void {
  res.type('application/json');
  if (typeof json === 'string' && json.length <= WRITE_SLICE_BYTES) return void res.send(json);
  let holder: Held | undefined =
    typeof json !== 'string' ? json : shared ? shared.share(json) : { bytes: Buffer.from(json) };
  res.set('Content-Length', String(holder.bytes.length));
  if (!res.get('ETag') && (req.method === 'GET' || req.method === 'HEAD')) {
    const etag = etagOf(req, holder);
    if (etag) res.set('ETag', etag);
  }
  if (req.method === 'HEAD') return void res.end();
  void writePaced(res, () => {
    const bytes = holder!;
    holder = undefined;
    return bytes;
  }).then((written) => {
    if (written) res.end();
  });
}

function send(req: Request, res: Response, response: BridgeResponse, shared?: SharedTexts, kept?: KeptAnswer): void {
  res.status(response.status).set(response.headers);
  if (response.body === undefined) res.end();
  else if (typeof response.body === 'string') res.send(response.body);
  else sendJson(req, res, jsonOf(response.body, kept), shared);
}

/** Whether every percent-escape of `path` decodes (Express answered 400 for one that does not). */
function decodes(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** `If-None-Match` holds `etag` (weak comparison, RFC 9110 §13.1.2), or is `*`. */
function noneMatchHolds(header: string, etag: string): boolean {
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}

/**
 * A route that takes `If-None-Match` answers 304 when its answer would carry that ETag (the ETag
 * Express gives the same body). Express does that itself, except when the request also says
 * `Cache-Control: no-cache` — which fetch() adds to every conditional request — though that
 * directive is meant for caches, not for the origin server evaluating the condition.
 */
function sendConditional(
  req: Request,
  res: Response,
  response: BridgeResponse,
  shared?: SharedTexts,
  kept?: KeptAnswer,
): void {
  const condition = req.headers['if-none-match'];
  if (!condition || response.status !== 200 || response.body === undefined)
    return send(req, res, response, shared, kept);
  const json = jsonOf(response.body, kept);
  const etag = etagOf(req, json);
  res.status(response.status).set(response.headers);
  if (!etag) return sendJson(req, res, json, shared);
  // Set here, Express does not hash the body a second time.
  res.set('ETag', etag);
  if (noneMatchHolds(condition, etag)) return void res.status(304).end();
  sendJson(req, res, json, shared);
}

/** Mounts every route of the table under /api/v1, plus the envelope for bad JSON and unknown paths. */
export function mountRestBridge(
  app: Express,
  schema: GraphQLSchema,
  document: DocumentNode,
  routes: Route[],
  services: ApiServices,
): void {
  const router = express.Router();
  // JSON bodies are parsed (and their limits kept) in front of every route: src/http/json-body.ts.
  let openApi: Record<string, unknown> | undefined;
  router.get('/openapi.json', (_req: Request, res: Response) => {
    res.locals.route = `${API_PREFIX}/openapi.json`;
    res.json((openApi ??= buildOpenApi(routes, { schema, document })));
  });
  // The route table in a radix tree: Express tries its routes one by one, which for the last of ~50
  // rows cost more than the rest of an ended run's read.
  const table = FindMyWay({ ignoreTrailingSlash: true });
  for (const route of routes) {
    compileRoute(route);
    if (route.shape === 'event-stream') continue;
    table.on(route.method, route.path, () => {}, route);
  }
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    const found = table.find((req.method === 'HEAD' ? 'GET' : req.method) as HTTPMethod, req.path);
    if (!found) {
      if (!decodes(req.path))
        send(req, res, errorResponse({ code: 'BadClientData', message: 'The path is not validly percent-encoded' }));
      else next();
      return;
    }
    const route = found.store as Route;
    try {
      res.locals.route = `${API_PREFIX}${route.path}`;
      // RFC 9110 §15.5.16: content in a format the route does not take is 415, not a guess at its fields.
      if (route.body && hasContent(req) && !req.is(JSON_TYPES)) {
        const type = req.headers['content-type'];
        send(
          req,
          res,
          errorResponse({
            code: 'UnsupportedMediaType',
            message: `The request body must be JSON: send Content-Type: application/json${type ? ` (not ${type})` : ''}`,
          }),
        );
        return;
      }
      // The caller as src/http/rest-authentication.ts found it, in front of the body parser.
      const context = await buildContext(services, req, res.locals.auth as Parameters<typeof buildContext>[2]);
      const response = await runRoute(
        schema,
        document,
        route,
        {
          params: { ...found.params } as Record<string, string>,
          query: req.query,
          body: req.body,
          headers: req.headers,
        },
        context,
        (error) => req.log?.error({ err: error, route: route.path }, 'internal error in REST route'),
      );
      // The answer's bytes are shared only where the route says so, for a 200 object answer its resolver offered to share.
      const kept =
        route.sharesAnswer && (route.shape ?? 'object') === 'object' && response.status === 200 && context.sharedAnswers
          ? { answers: context.sharedAnswers, key: `${route.method} ${route.path}` }
          : undefined;
      if (route.requestHeaders?.includes('If-None-Match'))
        sendConditional(req, res, response, services.streams?.texts, kept);
      else send(req, res, response, services.streams?.texts, kept);
    } catch (error) {
      next(error);
    }
  });
  router.use((req: Request, res: Response) =>
    send(req, res, errorResponse({ code: 'NotFound', message: 'No such route' })),
  );
  router.use((error: Error & { status?: number }, req: Request, res: Response, _next: NextFunction) => {
    if (error.status && error.status >= 400 && error.status < 500) {
      return send(req, res, errorResponse({ code: 'BadClientData', message: error.message }));
    }
    req.log?.error({ err: error }, 'internal error in REST bridge');
    send(req, res, errorResponse({ code: 'Internal', message: 'Internal server error' }));
  });
  app.use(API_PREFIX, router);
}
