import fs from 'node:fs';
import path from 'node:path';
import type { Express, NextFunction, Request, Response } from 'express';
import { AgentCard, agentCardHandler, jsonRpcHandler } from './sdk';
import { authenticate, type Authentication } from '../auth/authenticate';
import { unauthorized } from '../errors';
import { errorEnvelope } from '../error-status';
import { jsonBody } from '../http/json-body';
import { streamClient } from '../streams/open-streams';
import { PROJECT_ROOT } from '../paths';
import type { ApiServices } from '../graphql/context';
import { A2A_PATH, AGENT_CARD_PATH, asksLegacy } from './card';
import { CallerUser, RunTaskHandler, type A2aCaller } from './handler';

export { A2A_PATH, AGENT_CARD_PATH };

/** A refused bearer token: the service's 401 envelope, naming the scheme as RFC 6750 asks. */
function refuse(res: Response, auth: Extract<Authentication, { kind: 'invalid' }> | null): void {
  const { status, body } = errorEnvelope(auth ? unauthorized(auth.message) : unauthorized());
  res
    .status(status)
    .set({
      'WWW-Authenticate': auth ? 'Bearer error="invalid_token"' : 'Bearer',
      'Cache-Control': 'no-store',
    })
    .json(body);
}

/**
 * A2A (docs/a2a.md): the agent card at /.well-known/agent-card.json (the caller's runnable circuits
 * as skills; no skills without a token) and the JSON-RPC endpoint at /a2a, framed by the SDK's
 * express handler over RunTaskHandler. Mounted before the app's body parser: the token is checked
 * before the body is read, then the body goes through the service's own parser (1 MiB, input hygiene).
 */
export function mountA2a(app: Express, services: ApiServices): void {
  const { version } = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    version: string;
  };
  const handler = new RunTaskHandler({ services, version, baseUrl: () => services.config.publicUrl ?? '' });

  // app.use strips the path, as the SDK's card router (answering GET /) expects.
  app.use(AGENT_CARD_PATH, async (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' || req.path !== '/') return next();
    res.locals.route = `GET ${AGENT_CARD_PATH}`;
    try {
      const auth = await authenticate(services.tokenCache, req.headers.authorization);
      if (auth.kind === 'invalid') return refuse(res, auth);
      const card = auth.kind === 'token' ? await handler.cardFor(auth.user) : await handler.getAgentCard();
      // The card depends on the caller's token and on the protocol version asked for.
      res.set({ 'Cache-Control': 'private, no-cache', Vary: 'Authorization, A2A-Version' });
      if (asksLegacy(req.header('A2A-Version'))) {
        // The previous protocol's card shape, translated by the SDK's compatibility layer.
        return agentCardHandler({
          agentCardProvider: async () => card,
          legacyCompat: { enabled: true },
          cache: { maxAge: 0 },
        })(req, res, next);
      }
      res
        .status(200)
        .type('application/json')
        .send(JSON.stringify(AgentCard.toJSON(card)));
    } catch (error) {
      next(error);
    }
  });

  const rpc = jsonRpcHandler({
    requestHandler: handler,
    userBuilder: async (req) => new CallerUser((req.res as Response).locals.a2aCaller as A2aCaller),
    legacyCompat: { enabled: true },
  });
  // app.use strips the path for the SDK's router (which answers POST /); other methods fall through to 404.
  app.use(
    A2A_PATH,
    async (req: Request, res: Response, next: NextFunction) => {
      if (req.method !== 'POST' || req.path !== '/') return next();
      res.locals.route = `POST ${A2A_PATH}`;
      try {
        const auth = await authenticate(services.tokenCache, req.headers.authorization);
        if (auth.kind !== 'token') return refuse(res, auth.kind === 'invalid' ? auth : null);
        const closed = new AbortController();
        res.on('close', () => closed.abort());
        const caller: A2aCaller = {
          viewer: auth.user,
          auth,
          closed: closed.signal,
          streamClient: streamClient(req, auth),
          setHeaders: (headers) => {
            if (!res.headersSent) res.set(headers);
          },
        };
        res.locals.a2aCaller = caller;
        next();
      } catch (error) {
        next(error);
      }
    },
    jsonBody({ timeoutMs: services.config.bodyTimeoutMs }),
    rpc,
  );
}
