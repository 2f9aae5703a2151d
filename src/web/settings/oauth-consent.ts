import crypto from 'node:crypto';
import type { Request, RequestHandler, Response, Router } from 'express';
import type { Sequelize } from 'sequelize';
import type { Config } from '../../config';
import { OAuthError } from '../../errors';
import { User } from '../../models';
import { createRateLimiter } from '../../ratelimit';
import {
  checkAuthorizationRequest,
  errorRedirect,
  redirectWith,
  type AuthorizationRequest,
  type PendingAuthorization,
} from '../../oauth/authorization-request';
import type { ClientDirectory } from '../../oauth/clients';
import { issueCode } from '../../oauth/codes';
import { oauthUrls } from '../../oauth/metadata';
import { OAUTH_REQUESTS_PER_MINUTE } from '../../oauth/routes';
import { messagePage } from '../pages';
import { csrfToken, save } from '../session';
import { requireCsrf, requireUser, signedInUser } from './guards';
import { consentPage } from './oauth-consent-page';

export interface ConsentDeps {
  config: Config;
  sequelize: Sequelize;
  clients: ClientDirectory;
  /** The protected resource's path (`/mcp`). */
  resourcePath: string;
}

/** A consent page left open longer than this is answered "start again" (its client has long given up). */
const PENDING_TTL_MS = 15 * 60_000;
/** Requests one session may have open at once (a few tabs); the oldest goes first. */
const MAX_PENDING = 5;

/**
 * The form's POST ends in a redirect to the client; browsers hold that redirect to the page's
 * `form-action`, so the consent page allows the redirect URI's origin (or its private-use scheme).
 */
function consentCsp(redirectUri: string): string {
  const url = new URL(redirectUri);
  const target = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
  return `default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self' ${target}; frame-ancestors 'none'; base-uri 'none'`;
}

function remember(req: Request, request: AuthorizationRequest): string {
  const now = Date.now();
  const open = Object.entries(req.session.oauthRequests ?? {})
    .filter(([, pending]) => now - pending.shownAt < PENDING_TTL_MS)
    .sort(([, a], [, b]) => a.shownAt - b.shownAt)
    .slice(-(MAX_PENDING - 1));
  const id = crypto.randomBytes(16).toString('base64url');
  req.session.oauthRequests = Object.fromEntries([...open, [id, { ...request, shownAt: now }]]);
  return id;
}

function take(req: Request, id: unknown): PendingAuthorization | undefined {
  const pending = typeof id === 'string' ? req.session.oauthRequests?.[id] : undefined;
  if (pending && req.session.oauthRequests) delete req.session.oauthRequests[id as string];
  return pending && Date.now() - pending.shownAt < PENDING_TTL_MS ? pending : undefined;
}

/**
 * The OAuth consent (docs/oauth.md): `GET /settings/oauth/authorize` checks the client's request
 * (a client or redirect URI that cannot be trusted is told to the user, never redirected to), sends a
 * visitor who is not signed in to sign in first and back, then shows who asks, where the answer goes
 * and which scopes; Approve or Deny posts back (CSRF-checked) and the browser is sent to the client
 * with a code or `error=access_denied`. The checked request waits in the session, so the form cannot
 * change what was shown.
 */
export function mountOAuthConsent(router: Router, deps: ConsentDeps, form: RequestHandler): void {
  const limiter = createRateLimiter({
    points: OAUTH_REQUESTS_PER_MINUTE,
    durationSeconds: 60,
    keyPrefix: 'oauth-authorize',
  });
  const urls = () => oauthUrls(deps.config.publicUrl ?? '', deps.resourcePath);
  const refuse = (req: Request, res: Response, status: number, message: string) =>
    res.status(status).send(
      messagePage({
        title: 'Cannot connect this application',
        message,
        user: res.locals.user as User | undefined,
        csrf: csrfToken(req),
      }),
    );

  router.get('/oauth/authorize', async (req, res, next) => {
    try {
      const decision = await limiter.consume(req.ip ?? 'unknown');
      if (!decision.allowed) {
        res.set('Retry-After', String(Math.max(1, Math.ceil(decision.resetMs / 1000))));
        return refuse(req, res, 429, 'Too many authorization requests. Try again in a minute.');
      }
      const checked = await checkAuthorizationRequest(req.query as Record<string, unknown>, deps.clients, urls());
      if (checked.kind === 'refused') return refuse(req, res, 400, checked.message);
      if (checked.kind === 'redirect') return res.redirect(303, checked.to);
      const user = req.session.userUid ? await User.findByPk(req.session.userUid) : null;
      if (!user) {
        req.session.returnTo = req.originalUrl;
        await save(req);
        return res.redirect(303, '/settings/sign-in');
      }
      res.locals.user = user;
      const id = remember(req, checked.request);
      const csrf = csrfToken(req);
      await save(req);
      res
        .set('Content-Security-Policy', consentCsp(checked.request.redirectUri))
        .send(consentPage({ user, csrf, requestId: id, request: checked.request }));
    } catch (error) {
      next(error);
    }
  });

  router.post('/oauth/authorize', requireUser, form, requireCsrf, async (req, res, next) => {
    try {
      const body = req.body as Record<string, unknown>;
      const pending = take(req, body.request);
      await save(req);
      if (!pending)
        return refuse(
          req,
          res,
          400,
          'This authorization request has expired or was already answered. Start again from your application.',
        );
      const { issuer } = urls();
      if (body.decision !== 'approve')
        return res.redirect(
          303,
          errorRedirect(
            pending.redirectUri,
            pending.state,
            issuer,
            new OAuthError('access_denied', 'the user denied the request'),
          ),
        );
      const code = await issueCode(deps.sequelize, pending, signedInUser(res));
      res.redirect(303, redirectWith(pending.redirectUri, { code, state: pending.state, iss: issuer }));
    } catch (error) {
      next(error);
    }
  });
}
