import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Sequelize } from 'sequelize';
import type { Config } from '../config';
import { AppError, OAuthError } from '../errors';
import { ERROR_STATUS, oauthErrorAnswer } from '../error-status';
import { createRateLimiter, type RateLimiter } from '../ratelimit';
import type { ClientDirectory } from './clients';
import { exchangeCode } from './codes';
import {
  AUTHORIZATION_SERVER_WELL_KNOWN,
  authorizationServerMetadata,
  OAUTH_PATHS,
  oauthUrls,
  PROTECTED_RESOURCE_WELL_KNOWN,
  protectedResourceMetadata,
  type OAuthUrls,
} from './metadata';

/** Per client address and minute, for each of registration, token and authorization (which fetches documents). */
export const OAUTH_REQUESTS_PER_MINUTE = 60;

export interface OAuthDeps {
  config: Config;
  sequelize: Sequelize;
  clients: ClientDirectory;
  /** The protected resource's path (`/mcp`). */
  resourcePath: string;
}

/** The issuer and resource as this service is reached: PUBLIC_URL, or the address it listens on. */
export function urlsOf(deps: Pick<OAuthDeps, 'config' | 'resourcePath'>): OAuthUrls {
  return oauthUrls(deps.config.publicUrl ?? '', deps.resourcePath);
}

/** A client address's limiter as middleware: past the limit, the OAuth answer with Retry-After. */
export function limitPerClient(limiter: RateLimiter) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const decision = await limiter.consume(req.ip ?? 'unknown');
      if (decision.allowed) return next();
      res.set('Retry-After', String(Math.max(1, Math.ceil(decision.resetMs / 1000))));
      sendOAuthError(res, new OAuthError('temporarily_unavailable', 'too many requests; try again later'));
    } catch (error) {
      next(error);
    }
  };
}

export function sendOAuthError(res: Response, error: OAuthError): void {
  const { status, body } = oauthErrorAnswer(error);
  res.status(status).set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json(body);
}

/** Metadata, registration and token are called from browser-based clients of any origin, with no cookie. */
function anyOrigin(_req: Request, res: Response, next: NextFunction): void {
  res.set('Access-Control-Allow-Origin', '*');
  next();
}

function preflight(_req: Request, res: Response): void {
  res
    .set({
      'Access-Control-Allow-Methods': 'GET, POST',
      'Access-Control-Allow-Headers': 'Content-Type, MCP-Protocol-Version',
      'Access-Control-Max-Age': '600',
    })
    .status(204)
    .end();
}

/**
 * The authorization server's HTTP endpoints (docs/oauth.md): RFC 9728 and RFC 8414 metadata,
 * `/oauth/authorize` (it hands the browser to the consent page in /settings), `/oauth/register`
 * (RFC 7591) and `/oauth/token`. Every refusal is OAuth's `{error, error_description}`, 4xx.
 */
export function mountOAuth(app: Express, deps: OAuthDeps): void {
  const limiters = {
    register: createRateLimiter({
      points: OAUTH_REQUESTS_PER_MINUTE,
      durationSeconds: 60,
      keyPrefix: 'oauth-register',
    }),
    token: createRateLimiter({ points: OAUTH_REQUESTS_PER_MINUTE, durationSeconds: 60, keyPrefix: 'oauth-token' }),
  };
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });
  const metadataPaths = [
    PROTECTED_RESOURCE_WELL_KNOWN,
    `${PROTECTED_RESOURCE_WELL_KNOWN}${deps.resourcePath}`,
    AUTHORIZATION_SERVER_WELL_KNOWN,
  ];
  for (const path of [...metadataPaths, OAUTH_PATHS.register, OAUTH_PATHS.token])
    app.options(path, anyOrigin, preflight);

  app.get(metadataPaths.slice(0, 2), anyOrigin, (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(protectedResourceMetadata(urlsOf(deps)));
  });
  app.get(AUTHORIZATION_SERVER_WELL_KNOWN, anyOrigin, (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(authorizationServerMetadata(urlsOf(deps)));
  });

  app.get(OAUTH_PATHS.authorize, (req, res) => {
    const query = req.originalUrl.indexOf('?');
    res.redirect(303, `${OAUTH_PATHS.consent}${query >= 0 ? req.originalUrl.slice(query) : ''}`);
  });

  app.post(OAUTH_PATHS.register, anyOrigin, limitPerClient(limiters.register), async (req, res, next) => {
    try {
      if (!req.is(['application/json', 'application/*+json']))
        throw new OAuthError(
          'invalid_client_metadata',
          'the registration must be a JSON body (Content-Type: application/json)',
        );
      const registered = await deps.clients.register(req.body);
      res.status(201).set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json(registered);
    } catch (error) {
      next(error);
    }
  });

  app.post(OAUTH_PATHS.token, anyOrigin, limitPerClient(limiters.token), form, async (req, res, next) => {
    try {
      if (!req.is('application/x-www-form-urlencoded'))
        throw new OAuthError('invalid_request', 'the token request must be application/x-www-form-urlencoded');
      const answer = await exchangeCode(deps.sequelize, urlsOf(deps), (req.body ?? {}) as Record<string, unknown>);
      res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json(answer);
    } catch (error) {
      next(error);
    }
  });

  // The form parser's refusals (too large, unreadable) are OAuth answers on these paths too.
  app.use(
    [OAUTH_PATHS.register, OAUTH_PATHS.token],
    (error: unknown, _req: Request, res: Response, next: NextFunction) => {
      if (error instanceof OAuthError) return sendOAuthError(res, error);
      // The service's JSON parser (malformed, too large, bad encoding) runs before these routes.
      if (error instanceof AppError && ERROR_STATUS[error.code] < 500)
        return sendOAuthError(res, new OAuthError('invalid_request', error.message));
      const parserError = error as { type?: string; status?: number };
      if (parserError.status && parserError.status >= 400 && parserError.status < 500)
        return sendOAuthError(
          res,
          new OAuthError(
            'invalid_request',
            parserError.type === 'entity.too.large'
              ? 'the request body is too large'
              : 'the request body could not be read',
          ),
        );
      next(error);
    },
  );
}
