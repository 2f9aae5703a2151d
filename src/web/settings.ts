import crypto from 'node:crypto';
import express, { NextFunction, Request, Response, Router } from 'express';
import multer from 'multer';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiToken, User } from '../models';
import { Blob } from '../models/blobs';
import { AppError } from '../errors';
import { hashPassword, verifyPassword } from '../auth/passwords';
import { createApiToken, revokeApiToken } from '../commands/createApiToken';
import { uploadBlob } from '../commands/uploadBlob';
import { isUid } from '../graphql/common/uid';
import type { Services } from '../services';
import { CSS, JS } from './assets';
import { blobsPage, Flash, messagePage, signInPage, tokensPage } from './pages';
import { csrfToken, csrfValid, destroy, regenerate, save, SESSION_COOKIE } from './session';

const BLOBS_PER_PAGE = 50;
const MAX_PASSWORD_LENGTH = 1024;

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
};

function signedInUser(res: Response): User {
  return res.locals.user as User;
}

function takeFlash(req: Request): Flash | undefined {
  const flash = req.session.flash;
  delete req.session.flash;
  return flash;
}

let dummyHash: Promise<string> | undefined;
/** Verifying against a throwaway hash keeps unknown usernames as slow as wrong passwords. */
function hashForTiming(): Promise<string> {
  return (dummyHash ??= hashPassword(crypto.randomUUID()));
}

/**
 * The settings web (DESIGN §2): sign-in with username and password, API tokens (create, list,
 * revoke) and blobs (upload, list). Server-rendered pages; every POST form carries the session's
 * CSRF token; sign-in attempts are rate limited per client IP and username.
 */
export function settingsRouter(services: Services): Router {
  const router = express.Router();
  const storage = services.blobStorage;
  const limiter = new RateLimiterMemory({ points: services.config.signInRateLimitPerMinute, duration: 60 });
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });
  const multipart = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: storage.maxBytes, files: 1, fields: 10, fieldSize: 4096, parts: 12 },
  }).single('file');

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

  /** Loads the signed-in user into res.locals.user, or sends the visitor to sign in. */
  const requireUser = async (req: Request, res: Response, next: NextFunction) => {
    try {
      const user = req.session.userUid ? await User.findByPk(req.session.userUid) : null;
      if (!user) return res.redirect(303, '/settings/sign-in');
      res.locals.user = user;
      next();
    } catch (error) {
      next(error);
    }
  };

  const forbidden = (req: Request, res: Response) => {
    res.status(403).send(messagePage({
      title: 'Form expired',
      message: 'This form was not accepted because its security token is missing or out of date. Reload the page and try again.',
      user: res.locals.user as User | undefined,
      csrf: csrfToken(req),
      link: { href: '/settings', label: 'Back to settings' },
    }));
  };

  const requireCsrf = (req: Request, res: Response, next: NextFunction) => (csrfValid(req) ? next() : forbidden(req, res));

  router.get('/', (req, res) => res.redirect(303, req.session.userUid ? '/settings/tokens' : '/settings/sign-in'));

  router.get('/sign-in', (req, res) => {
    if (req.session.userUid) return res.redirect(303, '/settings/tokens');
    res.send(signInPage({ csrf: csrfToken(req) }));
  });

  router.post('/sign-in', form, requireCsrf, async (req, res, next) => {
    try {
      const body = req.body as Record<string, unknown>;
      const username = (typeof body.username === 'string' ? body.username : '').trim().toLowerCase().slice(0, 100);
      const password = typeof body.password === 'string' ? body.password : '';
      const again = (status: number, error: string) => res.status(status).send(signInPage({ csrf: csrfToken(req), username, error }));

      const key = `${req.ip ?? 'unknown'}|${username}`;
      try {
        await limiter.consume(key);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        const seconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
        res.set('Retry-After', String(seconds));
        return again(429, `Too many sign-in attempts. Try again in ${seconds} seconds.`);
      }
      if (!username || !password || password.length > MAX_PASSWORD_LENGTH) return again(400, 'Enter your username and password.');

      const user = await User.findOne({ where: { username } });
      // Users without a password (created without --password) cannot sign in.
      const matches = await verifyPassword(password, user?.password_hash ?? (await hashForTiming()));
      if (!user || !user.password_hash || !matches) return again(401, 'Wrong username or password.');

      await limiter.delete(key);
      await regenerate(req);
      req.session.userUid = user.uid;
      csrfToken(req);
      await save(req);
      res.redirect(303, '/settings/tokens');
    } catch (error) {
      next(error);
    }
  });

  router.post('/sign-out', form, requireCsrf, async (req, res, next) => {
    try {
      await destroy(req);
      res.clearCookie(SESSION_COOKIE, { path: '/settings' });
      res.redirect(303, '/settings/sign-in');
    } catch (error) {
      next(error);
    }
  });

  const activeTokens = (user: User) =>
    ApiToken.findAll({ where: { user_uid: user.uid, revoked_at: null }, order: [['created_at', 'DESC']] });

  router.get('/tokens', requireUser, async (req, res, next) => {
    try {
      const user = signedInUser(res);
      res.send(tokensPage({ user, csrf: csrfToken(req), tokens: await activeTokens(user), flash: takeFlash(req) }));
    } catch (error) {
      next(error);
    }
  });

  router.post('/tokens', requireUser, form, requireCsrf, async (req, res, next) => {
    const user = signedInUser(res);
    const raw = (req.body as Record<string, unknown>).label;
    const label = (typeof raw === 'string' ? raw : '').trim();
    try {
      const { token } = await createApiToken(user, label);
      // Shown on this response only; never stored or shown again.
      res.status(201).send(tokensPage({ user, csrf: csrfToken(req), tokens: await activeTokens(user), created: { token, label } }));
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'BadClientData') return next(error);
      res.status(400).send(tokensPage({ user, csrf: csrfToken(req), tokens: await activeTokens(user), flash: { kind: 'error', message: error.message } }));
    }
  });

  router.post('/tokens/:uid/revoke', requireUser, form, requireCsrf, async (req, res, next) => {
    try {
      const uid = String(req.params.uid);
      const revoked = isUid(uid) && (await revokeApiToken(signedInUser(res), uid));
      req.session.flash = revoked ? { kind: 'ok', message: 'Token revoked.' } : { kind: 'error', message: 'That token does not exist or is already revoked.' };
      await save(req);
      res.redirect(303, '/settings/tokens');
    } catch (error) {
      next(error);
    }
  });

  const showBlobs = async (req: Request, res: Response, status: number, flash?: Flash) => {
    const user = signedInUser(res);
    const rawPage = typeof req.query.page === 'string' && /^\d{1,6}$/.test(req.query.page) ? Number(req.query.page) : 1;
    const page = Math.max(1, rawPage);
    const rows = await Blob.findAll({
      where: { user_uid: user.uid },
      order: [['created_at', 'DESC'], ['uid', 'ASC']],
      limit: BLOBS_PER_PAGE + 1,
      offset: (page - 1) * BLOBS_PER_PAGE,
    });
    res.status(status).send(blobsPage({
      user, csrf: csrfToken(req), blobs: rows.slice(0, BLOBS_PER_PAGE), hasMore: rows.length > BLOBS_PER_PAGE, page, flash, maxBytes: storage.maxBytes,
    }));
  };

  router.get('/blobs', requireUser, async (req, res, next) => {
    try {
      await showBlobs(req, res, 200, takeFlash(req));
    } catch (error) {
      next(error);
    }
  });

  router.post('/blobs', requireUser, (req, res, next) => {
    multipart(req, res, (error: unknown) => {
      res.locals.uploadError = error;
      next();
    });
  }, async (req, res, next) => {
    try {
      const uploadError = res.locals.uploadError as unknown;
      // Showing an error changes nothing, so it needs no CSRF check; storing does.
      if (uploadError instanceof multer.MulterError) {
        const tooLarge = uploadError.code === 'LIMIT_FILE_SIZE';
        const message = tooLarge ? `The file is larger than the limit of ${storage.maxBytes} bytes.` : `The upload was not accepted: ${uploadError.message}.`;
        return await showBlobs(req, res, tooLarge ? 413 : 400, { kind: 'error', message });
      }
      if (uploadError) throw uploadError;
      if (!csrfValid(req)) return forbidden(req, res);
      if (!req.file) return await showBlobs(req, res, 400, { kind: 'error', message: 'Choose a file to upload.' });

      let blob: Blob;
      try {
        // multer decodes the multipart filename as latin1; browsers send UTF-8.
        const filename = Buffer.from(req.file.originalname, 'latin1').toString('utf8');
        blob = await uploadBlob(storage, signedInUser(res), { filename, data: req.file.buffer });
      } catch (error) {
        if (error instanceof AppError && error.code !== 'Internal') {
          return await showBlobs(req, res, error.code === 'PayloadTooLarge' ? 413 : 400, { kind: 'error', message: error.message });
        }
        req.log?.error({ err: error }, 'blob upload failed');
        return await showBlobs(req, res, 500, { kind: 'error', message: 'The upload failed and nothing was stored. Please try again.' });
      }
      req.session.flash = { kind: 'ok', message: `Uploaded ${blob.filename || 'the file'} (${blob.byteCount} bytes). Its uid:`, code: blob.uid };
      await save(req);
      res.redirect(303, '/settings/blobs');
    } catch (error) {
      next(error);
    }
  });

  router.use((req: Request, res: Response) => {
    res.status(404).send(messagePage({ title: 'Not found', message: 'There is no such settings page.', csrf: csrfToken(req), link: { href: '/settings', label: 'Back to settings' } }));
  });

  router.use((error: Error & { type?: string; status?: number }, req: Request, res: Response, _next: NextFunction) => {
    const csrf = req.session ? csrfToken(req) : '';
    if (error.type === 'entity.too.large') {
      return res.status(413).send(messagePage({ title: 'Too large', message: 'The form was too large.', csrf }));
    }
    if (error.status && error.status >= 400 && error.status < 500) {
      return res.status(400).send(messagePage({ title: 'Bad request', message: 'The form could not be read.', csrf }));
    }
    req.log?.error({ err: error }, 'internal error in settings web');
    res.status(500).send(messagePage({ title: 'Something went wrong', message: 'The request failed. Please try again.', csrf, link: { href: '/settings', label: 'Back to settings' } }));
  });

  return router;
}
