import type { Request, RequestHandler, Response } from 'express';

/** Request headers a browser may send cross-origin: a token only from a listed origin. */
const TOKEN_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'Prefer', 'Last-Event-ID', 'X-Request-Id'];
const ANONYMOUS_HEADERS = TOKEN_HEADERS.filter((name) => name !== 'Authorization');
const METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';

/** Response headers a script on another origin may read (a browser shows it only the simple ones otherwise). */
export const EXPOSED_HEADERS = [
  'RateLimit-Policy',
  'RateLimit',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'Location',
  'Deprecation',
  'Preference-Applied',
  'ETag',
  'X-Request-Id',
];

export interface CorsOptions {
  /** Origins allowed to call with a token (CORS_ORIGINS), exactly as browsers send them. */
  origins: readonly string[];
  /** Path prefixes the rules apply to; other paths (the settings pages) answer no other origin. */
  prefixes: readonly string[];
  /**
   * URLs whose credential is in the URL itself (signed event streams, callbacks): any origin may use them,
   * whatever it sends, and they answer alike to every origin.
   */
  anyOrigin: (req: Request) => boolean;
}

/** `/a/:b/c` as a matcher of request paths (a trailing slash allowed). */
export function pathMatcher(template: string): (path: string) => boolean {
  const pattern = new RegExp(
    `^${template
      .split('/')
      .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/')}/?$`,
  );
  return (path) => pattern.test(path);
}

function allow(res: Response, origin: string, headers: string[] | null): void {
  res.set('Access-Control-Allow-Origin', origin);
  if (headers) {
    res.set('Access-Control-Allow-Methods', METHODS);
    res.set('Access-Control-Allow-Headers', headers.join(', '));
    res.set('Access-Control-Max-Age', '600');
  } else {
    res.set('Access-Control-Expose-Headers', EXPOSED_HEADERS.join(', '));
  }
}

function askedHeaders(req: Request): string[] {
  const raw = req.headers['access-control-request-headers'] ?? '';
  return raw
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
}

/**
 * Cross-origin rules, mounted before authentication: a preflight is answered here (204) from its headers
 * alone, so it never reaches the token lookup or the database. A listed origin is echoed (with
 * `Vary: Origin`: the answer depends on it); any other origin gets `*` for what needs no credential and
 * nothing at all for a request carrying one (a token or a cookie), which the browser then refuses.
 * `Access-Control-Allow-Credentials` is never sent: tokens travel in `Authorization`, never in cookies.
 */
export function cors({ origins, prefixes, anyOrigin }: CorsOptions): RequestHandler {
  const listed = new Set(origins);
  const covered = (path: string) => prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  return (req, res, next) => {
    if (!covered(req.path)) return next();
    const preflight = req.method === 'OPTIONS';
    if (anyOrigin(req)) {
      allow(res, '*', preflight ? ANONYMOUS_HEADERS : null);
      return preflight ? void res.status(204).end() : next();
    }
    res.vary('Origin');
    const origin = req.headers.origin;
    if (origin === undefined) return next();
    const isPreflight = preflight && req.headers['access-control-request-method'] !== undefined;
    if (listed.has(origin)) {
      allow(res, origin, isPreflight ? TOKEN_HEADERS : null);
    } else if (isPreflight ? !askedHeaders(req).includes('authorization') : !hasCredential(req)) {
      allow(res, '*', isPreflight ? ANONYMOUS_HEADERS : null);
    }
    return isPreflight ? void res.status(204).end() : next();
  };
}

function hasCredential(req: Request): boolean {
  return req.headers.authorization !== undefined || req.headers.cookie !== undefined;
}
