import express, { Express, NextFunction, Request, Response } from 'express';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import { buildContext } from '../src/graphql/context';
import type { Services } from '../src/services';
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

function send(res: Response, response: BridgeResponse): void {
  res.status(response.status).set(response.headers);
  if (response.body === undefined) res.end();
  else if (typeof response.body === 'string') res.send(response.body);
  else res.json(response.body);
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
function sendConditional(req: Request, res: Response, response: BridgeResponse): void {
  const condition = req.headers['if-none-match'];
  if (!condition || response.status !== 200 || response.body === undefined) return send(res, response);
  const text = JSON.stringify(response.body);
  const etagFn = req.app.get('etag fn') as ((body: Buffer, encoding: string) => string) | undefined;
  const etag = etagFn?.(Buffer.from(text, 'utf8'), 'utf8');
  res.status(response.status).set(response.headers);
  if (!etag) return void res.type('application/json').send(text);
  // Set here, Express does not hash the body a second time.
  res.set('ETag', etag);
  if (noneMatchHolds(condition, etag)) return void res.status(304).end();
  res.type('application/json').send(text);
}

/** Mounts every route of the table under /api/v1, plus the envelope for bad JSON and unknown paths. */
export function mountRestBridge(app: Express, schema: GraphQLSchema, document: DocumentNode, routes: Route[], services: Services): void {
  const router = express.Router();
  // JSON bodies are parsed (and their limits kept) in front of every route: src/http/json-body.ts.
  let openApi: Record<string, unknown> | undefined;
  router.get('/openapi.json', (_req: Request, res: Response) => {
    res.locals.route = 'GET /openapi.json';
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
      if (!decodes(req.path)) send(res, errorResponse({ code: 'BadClientData', message: 'The path is not validly percent-encoded' }));
      else next();
      return;
    }
    const route = found.store as Route;
    try {
      res.locals.route = `${route.method} ${route.path}`;
      // RFC 9110 §15.5.16: content in a format the route does not take is 415, not a guess at its fields.
      if (route.body && hasContent(req) && !req.is(JSON_TYPES)) {
        const type = req.headers['content-type'];
        send(res, errorResponse({ code: 'UnsupportedMediaType', message: `The request body must be JSON: send Content-Type: application/json${type ? ` (not ${type})` : ''}` }));
        return;
      }
      const context = await buildContext(services, req);
      const response = await runRoute(schema, document, route, { params: { ...found.params } as Record<string, string>, query: req.query, body: req.body, headers: req.headers }, context, (error) =>
        req.log?.error({ err: error, route: route.path }, 'internal error in REST route'));
      if (route.requestHeaders?.includes('If-None-Match')) sendConditional(req, res, response);
      else send(res, response);
    } catch (error) {
      next(error);
    }
  });
  router.use((_req: Request, res: Response) => send(res, errorResponse({ code: 'NotFound', message: 'No such route' })));
  router.use((error: Error & { status?: number }, req: Request, res: Response, _next: NextFunction) => {
    if (error.status && error.status >= 400 && error.status < 500) {
      return send(res, errorResponse({ code: 'BadClientData', message: error.message }));
    }
    req.log?.error({ err: error }, 'internal error in REST bridge');
    send(res, errorResponse({ code: 'Internal', message: 'Internal server error' }));
  });
  app.use(API_PREFIX, router);
}
