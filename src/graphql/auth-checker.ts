import type { AuthChecker } from 'type-graphql';
import { notAllowed, unauthorized } from '../errors';
import type { AppContext } from './context';

export const ADMIN = 'ADMIN';

/** `@Authorized()` needs a valid token; `@Authorized(ADMIN)` an admin's. */
export const authChecker: AuthChecker<AppContext> = ({ context }, roles) => {
  if (!context.viewer) throw unauthorized();
  if (roles.includes(ADMIN) && !context.viewer.is_admin) throw notAllowed('An admin token is required');
  return true;
};

/** A bad bearer token is a 401 everywhere, even where a token is optional (checked on every root field: root-fields.ts). */
export function rejectInvalidToken(context: AppContext): void {
  if (context.auth.kind === 'invalid') throw unauthorized(context.auth.message);
}
