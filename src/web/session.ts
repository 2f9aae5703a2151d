import crypto from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import session from 'express-session';
import connectPgSimple from 'connect-pg-simple';
import type { Pool } from 'pg';
import type { Sequelize } from 'sequelize';
import type { Logger } from '../logger';
import type { PendingAuthorization } from '../oauth/authorization-request';

declare module 'express-session' {
  interface SessionData {
    /** The signed-in user. */
    userUid?: string;
    /** The synchronizer token every POST form must echo as `_csrf`. */
    csrf?: string;
    /** One message for the next page shown. */
    flash?: { kind: 'ok' | 'error'; message: string; code?: string };
    /** A token just created, shown once by the page the creation redirects to, then forgotten. */
    newToken?: { token: string; label: string };
    /** Where sign-in goes on to: an OAuth authorization that was waiting for it. */
    returnTo?: string;
    /** Authorization requests shown on a consent page and not yet answered, by the id the page's form carries. */
    oauthRequests?: Record<string, PendingAuthorization>;
  }
}

export const SESSION_COOKIE = 'circuits.sid';
export const SESSION_TABLE = 'web_sessions';
const SESSION_MAX_AGE_MS = 12 * 60 * 60 * 1000;

/** connect-pg-simple needs only `query(text, params) → {rows}`: run it on the service's own pool. */
function sequelizePool(sequelize: Sequelize): Pool {
  return {
    query: async (text: string, params: unknown[] = []) => {
      const [rows] = await sequelize.query(text, { bind: params });
      return { rows };
    },
  } as unknown as Pool;
}

export interface WebSession {
  middleware: RequestHandler;
  close(): Promise<void>;
}

/**
 * Sessions in PostgreSQL (table from migration 0004). The cookie is HttpOnly, SameSite=Lax, scoped
 * to /settings, and Secure whenever the request arrived over https (directly or via a trusted proxy).
 */
export function createWebSession(sequelize: Sequelize, secret: string, log: Logger): WebSession {
  const PgStore = connectPgSimple(session);
  const store = new PgStore({
    pool: sequelizePool(sequelize),
    tableName: SESSION_TABLE,
    createTableIfMissing: false,
    pruneSessionInterval: 15 * 60,
    errorLog: (...args: unknown[]) => log.warn({ detail: args.map(String).join(' ') }, 'web session store error'),
  });
  const middleware = session({
    name: SESSION_COOKIE,
    secret,
    store,
    resave: false,
    saveUninitialized: false,
    cookie: { httpOnly: true, sameSite: 'lax', secure: 'auto', path: '/settings', maxAge: SESSION_MAX_AGE_MS },
  });
  return {
    middleware,
    close: async () => {
      await store.close();
    },
  };
}

/** The session's CSRF token, created on first use. */
export function csrfToken(req: Request): string {
  req.session.csrf ??= crypto.randomBytes(32).toString('base64url');
  return req.session.csrf;
}

/** Whether a POST carries the session's CSRF token (constant-time comparison). */
export function csrfValid(req: Request): boolean {
  const expected = req.session.csrf;
  const given = (req.body as Record<string, unknown> | undefined)?._csrf;
  if (!expected || typeof given !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/**
 * Saves the session now. express-session otherwise saves while the response is already on its way,
 * so a browser following a redirect could arrive before the session holds what the redirect promised.
 */
export function save(req: Request): Promise<void> {
  return new Promise((resolve, reject) => req.session.save((error) => (error ? reject(error) : resolve())));
}

export function regenerate(req: Request): Promise<void> {
  return new Promise((resolve, reject) => req.session.regenerate((error) => (error ? reject(error) : resolve())));
}

export function destroy(req: Request): Promise<void> {
  return new Promise((resolve, reject) => req.session.destroy((error) => (error ? reject(error) : resolve())));
}
