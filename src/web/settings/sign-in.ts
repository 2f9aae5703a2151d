import crypto from 'node:crypto';
import type { RequestHandler, Router } from 'express';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { User } from '../../models';
import { hashPassword, verifyPassword } from '../../auth/passwords';
import type { Services } from '../../services';
import { signInPage } from '../pages';
import { csrfToken, destroy, regenerate, save, SESSION_COOKIE } from '../session';
import { requireCsrf } from './guards';

const MAX_PASSWORD_LENGTH = 1024;

let dummyHash: Promise<string> | undefined;
/** Verifying against a throwaway hash keeps unknown usernames as slow as wrong passwords. */
function hashForTiming(): Promise<string> {
  return (dummyHash ??= hashPassword(crypto.randomUUID()));
}

/** Sign-in with username and password (rate limited per client IP and username) and sign-out. */
export function mountSignIn(router: Router, services: Services, form: RequestHandler): void {
  const limiter = new RateLimiterMemory({ points: services.config.signInRateLimitPerMinute, duration: 60 });

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
}
