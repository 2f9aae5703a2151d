import crypto from 'node:crypto';
import type { RequestHandler, Router } from 'express';
import { User } from '../../models';
import { hashPassword, verifyPassword } from '../../auth/passwords';
import { createHashingGate } from '../../auth/hashing-gate';
import { AppError } from '../../errors';
import { createRateLimiter } from '../../ratelimit';
import type { ApiServices } from '../../graphql/context';
import { signInPage } from '../pages';
import { csrfToken, destroy, regenerate, save, SESSION_COOKIE } from '../session';
import { requireCsrf } from './guards';

const MAX_PASSWORD_LENGTH = 1024;

/**
 * Sign-in with username and password and sign-out. Attempts are limited per client IP (so rotating
 * usernames does not escape the limit) and per account (so rotating addresses does not either), both
 * counted before any password is hashed; hashing itself goes through a gate (src/auth/hashing-gate.ts).
 * The counts are this process's (src/ratelimit, in memory).
 */
export function mountSignIn(router: Router, services: ApiServices, form: RequestHandler): void {
  const { config } = services;
  const byClient = createRateLimiter({
    points: config.signInRateLimitPerClientPerMinute,
    durationSeconds: 60,
    keyPrefix: 'signin-client',
  });
  const byAccount = createRateLimiter({
    points: config.signInRateLimitPerMinute,
    durationSeconds: 60,
    keyPrefix: 'signin-account',
  });
  const hashing = createHashingGate();
  /** Verifying against a throwaway hash keeps unknown usernames as slow as wrong passwords (made on first use). */
  let dummyHash: Promise<string> | undefined;
  const hashForTiming = (): Promise<string> => (dummyHash ??= hashPassword(crypto.randomUUID()));

  router.get('/sign-in', (req, res) => {
    if (req.session.userUid) return res.redirect(303, '/settings/tokens');
    res.send(signInPage({ csrf: csrfToken(req) }));
  });

  router.post('/sign-in', form, requireCsrf, async (req, res, next) => {
    try {
      const body = req.body as Record<string, unknown>;
      const username = (typeof body.username === 'string' ? body.username : '').trim().toLowerCase().slice(0, 100);
      const password = typeof body.password === 'string' ? body.password : '';
      const again = (status: number, error: string) =>
        res.status(status).send(signInPage({ csrf: csrfToken(req), username, error }));

      for (const [limiter, key] of [
        [byClient, req.ip ?? 'unknown'],
        [byAccount, username],
      ] as const) {
        const decision = await limiter.consume(key);
        if (decision.allowed) continue;
        const seconds = Math.max(1, Math.ceil(decision.resetMs / 1000));
        res.set('Retry-After', String(seconds));
        return again(429, `Too many sign-in attempts. Try again in ${seconds} seconds.`);
      }
      if (!username || !password || password.length > MAX_PASSWORD_LENGTH)
        return again(400, 'Enter your username and password.');

      const user = await User.findOne({ where: { username } });
      // Users without a password (created without --password) cannot sign in.
      let matches: boolean;
      try {
        matches = await hashing.run(req.ip ?? 'unknown', async () =>
          verifyPassword(password, user?.password_hash ?? (await hashForTiming())),
        );
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'RateLimited') throw error;
        res.set('Retry-After', '5');
        return again(429, error.message);
      }
      if (!user || !user.password_hash || !matches) return again(401, 'Wrong username or password.');

      const { returnTo } = req.session;
      await regenerate(req);
      req.session.userUid = user.uid;
      csrfToken(req);
      await save(req);
      // Only an OAuth authorization waits for a sign-in; nothing else may choose where it goes.
      res.redirect(303, returnTo?.startsWith('/settings/oauth/') ? returnTo : '/settings/tokens');
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
