import type { RequestHandler } from 'express';

/**
 * Pages a browser shows, some of which hold credentials (GraphiQL keeps a pasted Authorization
 * header; /settings holds the session; an approval's decision page is reached by a URL whose key decides
 * the step): none of them may be framed by another site (clickjacking).
 * A page's own Content-Security-Policy (e.g. /settings') may replace this one; it keeps frame-ancestors.
 */
const FRAMED_PAGES = [/^\/$/, /^\/graphql\/?$/, /^\/api\/v1\/docs(\/|$)/, /^\/settings(\/|$)/, /^\/decisions\//];

export const ANTI_FRAMING_HEADERS = {
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "frame-ancestors 'none'",
} as const;

/** Sets the anti-framing headers on every answer of the pages above, errors and redirects included. */
export function antiFraming(): RequestHandler {
  return (req, res, next) => {
    const path = req.path;
    if (FRAMED_PAGES.some((page) => page.test(path))) res.set(ANTI_FRAMING_HEADERS);
    next();
  };
}
