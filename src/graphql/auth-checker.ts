import type { AuthChecker, MiddlewareFn } from 'type-graphql';
import { notAllowed, unauthorized } from '../errors';
import type { AppContext } from './context';

export const ADMIN = 'ADMIN';

/** `@Authorized()` needs a valid token; `@Authorized(ADMIN)` an admin's. */
export const authChecker: AuthChecker<AppContext> = ({ context }, roles) => {
  if (!context.viewer) throw unauthorized();
  if (roles.includes(ADMIN) && !context.viewer.is_admin) throw notAllowed('An admin token is required');
  return true;
};

/** A bad bearer token is a 401 everywhere, even where a token is optional. */
export const rejectInvalidToken: MiddlewareFn<AppContext> = async ({ context, info }, next) => {
  if (info.parentType.name in { Query: 1, Mutation: 1, Subscription: 1 } && context.auth.kind === 'invalid') {
    throw unauthorized('The bearer token is invalid or revoked');
  }
  return next();
};
