import crypto from 'node:crypto';

/** On what a wait URL answers: a signal wait's callback, an approval's decision. */
export type WaitUrlKind = 'signal' | 'approval';

/** Where each kind of wait URL lives under the service's origin. */
export const WAIT_URL_PREFIX: Record<WaitUrlKind, string> = {
  signal: '/api/v1/callbacks',
  approval: '/decisions',
};

/**
 * Wait URLs (docs/runs.md, Signals and callback URLs): `<origin><prefix>/<run uid>/<step path>/<key>`, where
 * the key is an HMAC-SHA256 of the kind, the run and the step's path under the service's secret. Nothing is
 * stored: the URL of every wait is known when the run is created, and a forged, truncated or moved key is
 * refused by a comparison in constant time before anything is read.
 */
export interface WaitUrls {
  url(runUid: string, path: string, kind: WaitUrlKind): string;
  /** Whether `key` is the key of this run, path and kind (in constant time, whatever the inputs). */
  verify(runUid: string, path: string, kind: WaitUrlKind, key: unknown): boolean;
}

export function waitKey(secret: string, runUid: string, path: string, kind: WaitUrlKind): string {
  return crypto.createHmac('sha256', secret).update(`run-wait\n${kind}\n${runUid}\n${path}`).digest('base64url');
}

/** `origin` is read at each call: PUBLIC_URL, or the address the API listens on once it is known. */
export function createWaitUrls(secret: string, origin: () => string): WaitUrls {
  return {
    url: (runUid, path, kind) =>
      `${origin()}${WAIT_URL_PREFIX[kind]}/${runUid}/${encodeURIComponent(path)}/${waitKey(secret, runUid, path, kind)}`,
    verify(runUid, path, kind, key) {
      const expected = Buffer.from(waitKey(secret, runUid, path, kind));
      const given = Buffer.alloc(expected.length);
      const text = typeof key === 'string' ? key : '';
      given.write(text.slice(0, expected.length));
      // Compared whatever the length, so that a short key takes as long as a long one.
      return crypto.timingSafeEqual(given, expected) && text.length === expected.length;
    },
  };
}
