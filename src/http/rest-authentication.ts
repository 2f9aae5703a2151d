import type { NextFunction, Request, RequestHandler, Response } from 'express';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { authenticate } from '../auth/authenticate';
import { unauthorized } from '../errors';
import type { ApiServices } from '../graphql/context';
import { errorEnvelope } from '../error-status';
import type { Route } from '../../rest-bridge/route';
import { announcedTooLarge, closeAfterAnswer } from './json-body';
import { API_PREFIX } from '../../rest-bridge/express';

/** A request with content to come: `Content-Length: 0` (what clients send with an empty PUT) has none. */
function hasContent(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Authentication before anything else is checked of a request to a route of the REST table (its
 * media type, its JSON, its fields, its query, its path parameters): mounted under /api/v1 in front
 * of the body parser, it answers 401 when a route that needs a token (`auth: 'required'`) has none,
 * and when the bearer token sent to any route is invalid, revoked or expired, without reading the
 * body. Only a body announced too large (Content-Length) is refused before it, by the body parser
 * (413, read from the headers alone, as on every surface). What it found is `res.locals.auth`, which the bridge's context reuses. Whether the token may
 * do what it asks (its scopes, the resource's owner: 403) is the operation's to decide, after validation.
 */
export function authenticateRoutes(routes: Route[], services: Pick<ApiServices, 'tokenCache'>): RequestHandler {
  const table = FindMyWay({ ignoreTrailingSlash: true });
  for (const route of routes) table.on(route.method, route.path, () => {}, route);
  return async (req: Request, res: Response, next: NextFunction) => {
    const found = table.find((req.method === 'HEAD' ? 'GET' : req.method) as HTTPMethod, req.path);
    if (!found || announcedTooLarge(req)) return next();
    const route = found.store as Route;
    try {
      const auth = await authenticate(services.tokenCache, req.headers.authorization);
      res.locals.auth = auth;
      const refusal =
        auth.kind === 'invalid'
          ? unauthorized(auth.message)
          : route.auth === 'required' && auth.kind !== 'token'
            ? unauthorized()
            : undefined;
      if (!refusal) return next();
      res.locals.route = `${API_PREFIX}${route.path}`;
      if (hasContent(req) && !req.complete) closeAfterAnswer(req, res);
      const { status, body } = errorEnvelope(refusal);
      res.status(status).json(body);
    } catch (error) {
      next(error);
    }
  };
}
