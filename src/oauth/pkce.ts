import crypto from 'node:crypto';

/** An S256 challenge: base64url of a SHA-256, always 43 characters. */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 4.1. */
export const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export function s256(verifier: string): string {
  return crypto.hash('sha256', verifier, 'base64url');
}

/** Whether `verifier` answers `challenge`, compared in constant time. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  const a = Buffer.from(s256(verifier));
  const b = Buffer.from(challenge);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
