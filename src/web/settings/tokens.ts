import type { RequestHandler, Router } from 'express';
import { ApiToken, User } from '../../models';
import { AppError } from '../../errors';
import { createApiToken } from '../../commands/create-api-token';
import { revokeApiToken } from '../../commands/revoke-api-token';
import { isUid } from '../../ids';
import { tokensPage } from '../pages';
import { csrfToken, save } from '../session';
import { requireCsrf, requireUser, signedInUser, takeFlash } from './guards';

const activeTokens = (user: User) =>
  ApiToken.findAll({ where: { user_uid: user.uid, revoked_at: null }, order: [['created_at', 'DESC']] });

/** The API Tokens section: create with a label (shown once), list with last use, revoke. */
export function mountTokens(router: Router, form: RequestHandler): void {
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
}
