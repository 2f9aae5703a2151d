import type { NextFunction, Request, Response } from 'express';
import { User } from '../../models';
import { Flash, messagePage } from '../pages';
import { csrfToken, csrfValid } from '../session';

/** The user `requireUser` loaded for this request. */
export function signedInUser(res: Response): User {
  return res.locals.user as User;
}

/** A one-time message kept in the session across a redirect. */
export function takeFlash(req: Request): Flash | undefined {
  const flash = req.session.flash;
  delete req.session.flash;
  return flash;
}

/** Loads the signed-in user into res.locals.user, or sends the visitor to sign in. */
export async function requireUser(req: Request, res: Response, next: NextFunction): Promise<void> {
  try {
    const user = req.session.userUid ? await User.findByPk(req.session.userUid) : null;
    if (!user) return res.redirect(303, '/settings/sign-in');
    res.locals.user = user;
    next();
  } catch (error) {
    next(error);
  }
}

/** The answer to a POST whose CSRF token is missing or stale: nothing was changed. */
export function formExpired(req: Request, res: Response): void {
  res.status(403).send(
    messagePage({
      title: 'Form expired',
      message:
        'This form was not accepted because its security token is missing or out of date. Reload the page and try again.',
      user: res.locals.user as User | undefined,
      csrf: csrfToken(req),
      link: { href: '/settings', label: 'Back to settings' },
    }),
  );
}

export function requireCsrf(req: Request, res: Response, next: NextFunction): void {
  if (csrfValid(req)) next();
  else formExpired(req, res);
}
