import type { RequestHandler, Router } from 'express';
import { ApiToken, User } from '../../models';
import { AppError, badInput } from '../../errors';
import { createApiToken, type TokenLimitsInput } from '../../commands/create-api-token';
import { revokeApiToken } from '../../commands/revoke-api-token';
import { isUid } from '../../ids';
import { apiTokenViews } from '../../views/api-token.view';
import { revokeTokenPage, tokensPage } from '../pages';
import { csrfToken, save } from '../session';
import { requireCsrf, requireUser, signedInUser, takeFlash } from './guards';

/** The user's active tokens, newest first, as GET /users/tokens shows them. */
const activeTokens = async (user: User) => {
  const rows = await ApiToken.findAll({
    where: { user_uid: user.uid, revoked_at: null },
    order: [
      ['created_at', 'DESC'],
      ['uid', 'ASC'],
    ],
  });
  return apiTokenViews(ApiToken.sequelize!, rows);
};

const activeToken = (user: User, uid: string) =>
  isUid(uid) ? ApiToken.findOne({ where: { uid, user_uid: user.uid, revoked_at: null } }) : Promise.resolve(null);

const text = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');

/** A whole number typed in a form field, or null when it is empty; anything else is a 400 naming the field. */
function formNumber(value: unknown, field: string): number | null {
  const raw = text(value);
  if (raw === '') return null;
  if (!/^\d{1,16}$/.test(raw)) throw badInput(`${field} must be a whole number`, { field });
  return Number(raw);
}

/** The limits of the create form (docs/tokens.md): ticked scopes, days to expiry, circuit uids, a daily credit cap; empty means none. */
function limitsOfForm(body: Record<string, unknown>): TokenLimitsInput {
  const scopes = (Array.isArray(body.scopes) ? body.scopes : body.scopes === undefined ? [] : [body.scopes]).map(
    String,
  );
  const days = formNumber(body.expires_in_days, 'expires_in_days');
  const circuits = text(body.circuit_uids)
    .split(/[\s,]+/)
    .filter(Boolean);
  return {
    scopes: scopes.length > 0 ? scopes : null,
    expiresAt: days === null ? null : new Date(Date.now() + Math.min(days, 3650) * 86_400_000),
    circuitUids: circuits.length > 0 ? circuits : null,
    maxCreditsPerDay: formNumber(body.max_credits_per_day, 'max_credits_per_day'),
  };
}

/**
 * The API Tokens section: create with a label and optional limits, list with last use and limits,
 * revoke after a confirmation.
 * Creating answers with a redirect (POST-redirect-GET), so reloading the page never creates a second
 * token; the new token rides in the session to that one page view and is forgotten there.
 */
export function mountTokens(router: Router, form: RequestHandler): void {
  router.get('/tokens', requireUser, async (req, res, next) => {
    try {
      const user = signedInUser(res);
      const created = req.session.newToken;
      if (created) {
        delete req.session.newToken;
        await save(req);
      }
      res.send(
        tokensPage({ user, csrf: csrfToken(req), tokens: await activeTokens(user), flash: takeFlash(req), created }),
      );
    } catch (error) {
      next(error);
    }
  });

  router.post('/tokens', requireUser, form, requireCsrf, async (req, res, next) => {
    const user = signedInUser(res);
    const body = req.body as Record<string, unknown>;
    const label = (typeof body.label === 'string' ? body.label : '').trim();
    try {
      const { token } = await createApiToken(user, label, limitsOfForm(body));
      req.session.newToken = { token, label };
      await save(req);
      res.redirect(303, '/settings/tokens');
    } catch (error) {
      if (!(error instanceof AppError) || (error.code !== 'BadClientData' && error.code !== 'Conflict'))
        return next(error);
      res.status(error.code === 'Conflict' ? 409 : 400).send(
        tokensPage({
          user,
          csrf: csrfToken(req),
          tokens: await activeTokens(user),
          flash: { kind: 'error', message: error.message },
        }),
      );
    }
  });

  router.get('/tokens/:uid/revoke', requireUser, async (req, res, next) => {
    try {
      const user = signedInUser(res);
      const token = await activeToken(user, String(req.params.uid));
      if (!token) {
        req.session.flash = { kind: 'error', message: 'That token does not exist or is already revoked.' };
        await save(req);
        return res.redirect(303, '/settings/tokens');
      }
      res.send(revokeTokenPage({ user, csrf: csrfToken(req), token }));
    } catch (error) {
      next(error);
    }
  });

  router.post('/tokens/:uid/revoke', requireUser, form, requireCsrf, async (req, res, next) => {
    try {
      const uid = String(req.params.uid);
      const revoked = isUid(uid) && (await revokeApiToken(signedInUser(res), uid));
      req.session.flash = revoked
        ? { kind: 'ok', message: 'Token revoked.' }
        : { kind: 'error', message: 'That token does not exist or is already revoked.' };
      await save(req);
      res.redirect(303, '/settings/tokens');
    } catch (error) {
      next(error);
    }
  });
}
