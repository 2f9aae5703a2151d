import express, { NextFunction, Request, Response, Router } from 'express';
import type { ApiServices } from '../graphql/context';
import { CSS, JS } from './assets';
import { messagePage } from './pages';
import { csrfToken } from './session';
import { mountSignIn } from './settings/sign-in';
import { mountTokens } from './settings/tokens';
import { mountBlobs } from './settings/blobs';
import { mountWebhooks } from './settings/webhooks';
import { mountAccount } from './settings/account';
import { mountCircuits } from './settings/circuits';
import { mountOAuthConsent, type ConsentDeps } from './settings/oauth-consent';

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
};

/**
 * The settings web: sign-in with username and password, API tokens (create, list,
 * revoke), the OAuth consent for MCP clients, blobs (upload, list), runs (and deciding their approval steps) and credits (balance, ledger). Server-rendered pages; every POST form carries the session's
 * CSRF token; sign-in attempts are rate limited per client IP and username.
 */
export function settingsRouter(services: ApiServices, oauth: ConsentDeps): Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });

  router.use((_req, res, next) => {
    res.set(SECURITY_HEADERS);
    next();
  });
  router.get('/assets/settings.css', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=3600').type('text/css').send(CSS);
  });
  router.get('/assets/settings.js', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=3600').type('text/javascript').send(JS);
  });
  router.get('/', (req, res) => res.redirect(303, req.session.userUid ? '/settings/tokens' : '/settings/sign-in'));

  mountSignIn(router, services, form);
  mountTokens(router, form);
  mountBlobs(router, services.blobStorage);
  mountWebhooks(router, services, form);
  mountAccount(router, services, form);
  mountCircuits(router, services, form);
  mountOAuthConsent(router, oauth, form);

  router.use((req: Request, res: Response) => {
    res.status(404).send(
      messagePage({
        title: 'Not found',
        message: 'There is no such settings page.',
        csrf: csrfToken(req),
        link: { href: '/settings', label: 'Back to settings' },
      }),
    );
  });
  router.use((error: Error & { type?: string; status?: number }, req: Request, res: Response, _next: NextFunction) => {
    // Answered already: the body timeout's 408 (src/http/json-body.ts), after which the form's parser gave up.
    if (res.headersSent) return;
    const csrf = req.session ? csrfToken(req) : '';
    if (error.type === 'entity.too.large') {
      return res.status(413).send(messagePage({ title: 'Too large', message: 'The form was too large.', csrf }));
    }
    if (error.status && error.status >= 400 && error.status < 500) {
      return res.status(400).send(messagePage({ title: 'Bad request', message: 'The form could not be read.', csrf }));
    }
    req.log?.error({ err: error }, 'internal error in settings web');
    res.status(500).send(
      messagePage({
        title: 'Something went wrong',
        message: 'The request failed. Please try again.',
        csrf,
        link: { href: '/settings', label: 'Back to settings' },
      }),
    );
  });

  return router;
}
