import express, { Express, NextFunction, Request, Response } from 'express';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import { buildContext } from '../src/graphql/context';
import type { Services } from '../src/services';
import { errorResponse, runRoute, BridgeResponse } from './bridge';
import type { Route } from './route';
import { buildOpenApi } from './openapi';

export const API_PREFIX = '/api/v1';

function send(res: Response, response: BridgeResponse): void {
  res.status(response.status).set(response.headers);
  if (response.body === undefined) res.end();
  else res.json(response.body);
}

/** Mounts every route of the table under /api/v1, plus the envelope for bad JSON and unknown paths. */
export function mountRestBridge(app: Express, schema: GraphQLSchema, document: DocumentNode, routes: Route[], services: Services): void {
  const router = express.Router();
  router.use(express.json({ limit: '1mb', strict: false }));
  let openApi: Record<string, unknown> | undefined;
  router.get('/openapi.json', (_req: Request, res: Response) => {
    res.locals.route = 'GET /openapi.json';
    res.json((openApi ??= buildOpenApi(routes, { schema, document })));
  });
  for (const route of routes) {
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
    router[method](route.path, async (req: Request, res: Response, next: NextFunction) => {
      try {
        const context = await buildContext(services, req);
        const response = await runRoute(schema, document, route, { params: req.params as Record<string, string>, query: req.query, body: req.body, headers: req.headers }, context, (error) =>
          req.log?.error({ err: error, route: route.path }, 'internal error in REST route'));
        res.locals.route = `${route.method} ${route.path}`;
        send(res, response);
      } catch (error) {
        next(error);
      }
    });
  }
  router.use((_req: Request, res: Response) => send(res, errorResponse({ code: 'NotFound', message: 'No such route' })));
  router.use((error: Error & { type?: string; status?: number }, req: Request, res: Response, _next: NextFunction) => {
    if (error.type === 'entity.parse.failed') return send(res, errorResponse({ code: 'BadClientData', message: 'Malformed JSON body' }));
    if (error.type === 'entity.too.large') return send(res, errorResponse({ code: 'PayloadTooLarge', message: 'Request body too large' }));
    if (error.status && error.status >= 400 && error.status < 500) {
      return send(res, errorResponse({ code: 'BadClientData', message: error.message }));
    }
    req.log?.error({ err: error }, 'internal error in REST bridge');
    send(res, errorResponse({ code: 'Internal', message: 'Internal server error' }));
  });
  app.use(API_PREFIX, router);
}
