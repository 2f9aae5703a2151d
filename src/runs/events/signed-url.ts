import crypto from 'node:crypto';

/** How long a signed event-stream URL lasts (at most 5 minutes; docs/typed-clients.md, Signed event-stream URLs). */
export const EVENTS_URL_TTL_SECONDS = 300;

/**
 * A short-lived signature that lets a browser's EventSource (which sends no headers) open a run's
 * event stream as the reader who asked for it: HMAC-SHA256 over the run uid, the expiry (epoch
 * seconds), the reader's user uid ('' for an anonymous reader of a public run) and the API token the
 * reader asked with ('' for a session), like the signed blob URLs (src/storage/LocalStorage.ts). The URL
 * lives no longer than that token: revoked, it stops opening, and open streams of it end.
 */
export function signRunEvents(
  secret: string,
  runUid: string,
  readerUid: string | null,
  expires: number,
  tokenUid: string | null = null,
): string {
  return crypto
    .createHmac('sha256', secret)
    .update(`run-events\n${runUid}\n${expires}\n${readerUid ?? ''}\n${tokenUid ?? ''}`)
    .digest('base64url');
}

export interface SignedEventsQuery {
  signature?: unknown;
  expires?: unknown;
  reader?: unknown;
  token?: unknown;
}

/** The query string of a signed events URL for `readerUid`, and when it expires. */
export function signedEventsQuery(
  secret: string,
  runUid: string,
  readerUid: string | null,
  now = Date.now(),
  tokenUid: string | null = null,
): { query: string; expiresAt: Date } {
  const expires = Math.floor(now / 1000) + EVENTS_URL_TTL_SECONDS;
  const params = new URLSearchParams({ expires: String(expires) });
  if (readerUid) params.set('reader', readerUid);
  if (readerUid && tokenUid) params.set('token', tokenUid);
  params.set('signature', signRunEvents(secret, runUid, readerUid, expires, readerUid ? tokenUid : null));
  return { query: params.toString(), expiresAt: new Date(expires * 1000) };
}

export type EventsSignatureCheck =
  { ok: true; readerUid: string | null; tokenUid: string | null } | { ok: false; reason: 'expired' | 'invalid' };

/** Checks a signed events URL's expiry (never more than the TTL ahead) and signature, in constant time. */
export function checkEventsSignature(
  secret: string,
  runUid: string,
  query: SignedEventsQuery,
  now = Date.now(),
): EventsSignatureCheck {
  const { signature, expires, reader, token } = query;
  if (typeof signature !== 'string' || typeof expires !== 'string' || !/^\d{1,12}$/.test(expires))
    return { ok: false, reason: 'invalid' };
  if (reader !== undefined && (typeof reader !== 'string' || !/^[0-9a-f-]{36}$/i.test(reader)))
    return { ok: false, reason: 'invalid' };
  if (token !== undefined && (typeof token !== 'string' || !/^[0-9a-f-]{36}$/i.test(token)))
    return { ok: false, reason: 'invalid' };
  const readerUid = (reader as string | undefined) ?? null;
  const tokenUid = (token as string | undefined) ?? null;
  const expected = Buffer.from(signRunEvents(secret, runUid, readerUid, Number(expires), tokenUid));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected))
    return { ok: false, reason: 'invalid' };
  const seconds = Number(expires);
  const nowSeconds = Math.floor(now / 1000);
  if (seconds < nowSeconds) return { ok: false, reason: 'expired' };
  if (seconds > nowSeconds + EVENTS_URL_TTL_SECONDS) return { ok: false, reason: 'invalid' };
  return { ok: true, readerUid, tokenUid };
}
