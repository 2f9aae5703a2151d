import type { Sequelize } from 'sequelize';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { AppError } from '../errors';
import { createRateLimiter, RateLimiter } from './rate-limiter';

export { createRateLimiter };
export type { RateLimiter, RateLimitDecision } from './rate-limiter';

/** Search: config.searchRateLimitPerMinute per client per minute, on Redis or the service database. */
export function createSearchRateLimiter(config: Config, sequelize: Sequelize, log?: Logger): RateLimiter {
  return createRateLimiter({
    points: config.searchRateLimitPerMinute,
    durationSeconds: 60,
    keyPrefix: 'search',
    sequelize,
    redisUrl: config.redisUrl,
    log,
  });
}

/** Run creation (docs/tokens.md, Run rate limit): config.runRateLimitPerMinute per token per minute; null when it is 0 (off). */
export function createRunRateLimiter(config: Config, sequelize: Sequelize, log?: Logger): RateLimiter | null {
  if (config.runRateLimitPerMinute === 0) return null;
  return createRateLimiter({
    points: config.runRateLimitPerMinute,
    durationSeconds: 60,
    keyPrefix: 'runs',
    sequelize,
    redisUrl: config.redisUrl,
    log,
  });
}

/** Who the run-creation limit counts against: the API token, else (a session, a password) the user. */
export function runRateLimitKey(viewer: { uid: string; tokenGrant?: { tokenUid: string } }): string {
  return viewer.tokenGrant ? `token:${viewer.tokenGrant.tokenUid}` : `user:${viewer.uid}`;
}

/** Who a limit counts against: the token's user when there is a valid token, else the IP. */
export function rateLimitKey(viewer: { uid: string } | null, clientIp: string): string {
  return viewer ? `user:${viewer.uid}` : `ip:${clientIp}`;
}

/**
 * Counts one request against `key`; sets the RateLimit-Policy and RateLimit fields of the IETF httpapi
 * draft (`"runs";q=600;w=60` and `"runs";r=599;t=42`) and the legacy RateLimit-Limit/-Remaining/-Reset
 * (seconds, kept for clients written against the earlier drafts) on the response, and on refusal
 * Retry-After and a RateLimited error (429).
 */
export async function enforceRateLimit(
  limiter: RateLimiter,
  key: string,
  responseHeaders: Record<string, string>,
): Promise<void> {
  const decision = await limiter.consume(key);
  const resetSeconds = Math.ceil(decision.resetMs / 1000);
  const { name, quota, windowSeconds } = limiter.policy;
  responseHeaders['RateLimit-Policy'] = `${sfString(name)};q=${quota};w=${windowSeconds}`;
  responseHeaders['RateLimit'] = `${sfString(name)};r=${decision.remaining};t=${resetSeconds}`;
  responseHeaders['RateLimit-Limit'] = String(decision.limit);
  responseHeaders['RateLimit-Remaining'] = String(decision.remaining);
  responseHeaders['RateLimit-Reset'] = String(resetSeconds);
  if (!decision.allowed) {
    const retryAfter = Math.max(1, resetSeconds);
    responseHeaders['Retry-After'] = String(retryAfter);
    throw new AppError(
      'RateLimited',
      `Too many requests: retry in ${retryAfter} second${retryAfter === 1 ? '' : 's'}`,
      { retryAfter },
    );
  }
}

/** A structured-field String (RFC 9651): quoted, with `"` and `\` escaped. */
function sfString(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/**
 * Counts one run creation against the viewer's token (docs/tokens.md) and sets the RateLimit-* headers;
 * RateLimited (429, Retry-After) beyond RUN_RATE_LIMIT_PER_MINUTE. Nothing when the limit is off.
 */
export async function limitRunCreation(
  limiter: RateLimiter | null,
  viewer: { uid: string; tokenGrant?: { tokenUid: string } },
  responseHeaders: Record<string, string>,
): Promise<void> {
  if (limiter) await enforceRateLimit(limiter, runRateLimitKey(viewer), responseHeaders);
}
