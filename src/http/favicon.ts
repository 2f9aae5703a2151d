import crypto from 'node:crypto';
import type { Express } from 'express';

/** A circuit's three nodes on the brand blue, as an SVG: browsers take it for /favicon.ico when the type says so. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="7" fill="#2355d8"/>
<path d="M9 10h7v12h7" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round" stroke-linejoin="round"/>
<circle cx="9" cy="10" r="3.5" fill="#fff"/><circle cx="16" cy="16" r="3" fill="#fff"/><circle cx="23" cy="22" r="3.5" fill="#fff"/>
</svg>
`;

/** The `<link>` every HTML page of the service carries, so no browser asks for a missing icon. */
export const FAVICON_LINK = '<link rel="icon" href="/favicon.ico" type="image/svg+xml">';

const ETAG = `"${crypto.createHash('sha256').update(FAVICON_SVG).digest('base64url').slice(0, 16)}"`;

/** GET /favicon.ico: the SVG above, cacheable for a day (it changes only with a release); Express answers 304 to its ETag. */
export function mountFavicon(app: Express): void {
  app.get('/favicon.ico', (_req, res) => {
    res.locals.route = 'GET /favicon.ico';
    res.set({ 'Cache-Control': 'public, max-age=86400', ETag: ETAG }).type('image/svg+xml').send(FAVICON_SVG);
  });
}
