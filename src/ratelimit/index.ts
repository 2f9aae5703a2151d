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

/** Who a limit counts against: the token's user when there is a valid token, else the IP. */
export function rateLimitKey(viewer: { uid: string } | null, clientIp: string): string {
  return viewer ? `user:${viewer.uid}` : `ip:${clientIp}`;
}

/**
 * Counts one request against `key`; sets RateLimit-Limit/-Remaining/-Reset (seconds) on the
 * response, and on refusal Retry-After and a RateLimited error (429).
 */
export async function enforceRateLimit(
  limiter: RateLimiter,
  key: string,
  responseHeaders: Record<string, string>,
): Promise<void> {
  const decision = await limiter.consume(key);
  const resetSeconds = Math.ceil(decision.resetMs / 1000);
  responseHeaders['RateLimit-Limit'] = String(decision.limit);
  responseHeaders['RateLimit-Remaining'] = String(decision.remaining);
  responseHeaders['RateLimit-Reset'] = String(resetSeconds);
  if (!decision.allowed) {
    const retryAfter = Math.max(1, resetSeconds);
    responseHeaders['Retry-After'] = String(retryAfter);
    throw new AppError('RateLimited', `Too many requests: retry in ${retryAfter} second${retryAfter === 1 ? '' : 's'}`, { retryAfter });
  }
}
