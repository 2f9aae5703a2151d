import { Redis } from 'ioredis';
import type { Sequelize } from 'sequelize';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../logger';

/** One request's verdict, with what the RateLimit-* headers report. */
export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets (and, when refused, until a retry can succeed). */
  resetMs: number;
}

/** A fixed-window counter per key, shared by every API process on the same store. */
export interface RateLimiter {
  readonly backend: 'postgres' | 'redis' | 'memory';
  consume(key: string): Promise<RateLimitDecision>;
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  /** Requests allowed per window. */
  points: number;
  /** Window length in seconds. */
  durationSeconds: number;
  keyPrefix: string;
  sequelize?: Sequelize;
  redisUrl?: string;
  log?: Logger;
}

/** The table made by migration 0003 (UNLOGGED; the library's own layout). */
export const RATE_LIMIT_TABLE = 'rate_limits';

/**
 * Redis when `redisUrl` is given, else the service's own PostgreSQL (so several API processes on
 * one database share each count), else process memory. A store failure falls back to an in-memory
 * limiter for that request (the insurance limiter) rather than failing the request.
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { points, durationSeconds: duration, keyPrefix } = options;
  const insuranceLimiter = new RateLimiterMemory({ points, duration, keyPrefix });
  // Once a key has used its points, refuse it from memory until its window ends: no store round trip.
  const common = { points, duration, keyPrefix, insuranceLimiter, inMemoryBlockOnConsumed: points };

  let backend: RateLimiter['backend'];
  let limiter: RateLimiterRedis | RateLimiterPostgres | RateLimiterMemory;
  let closeStore: () => Promise<void> = async () => {};
  if (options.redisUrl) {
    const redis = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
    redis.on('error', (err) => options.log?.warn({ err }, 'rate limiter: Redis error; counting in memory meanwhile'));
    limiter = new RateLimiterRedis({ ...common, storeClient: redis, rejectIfRedisNotReady: true });
    backend = 'redis';
    closeStore = async () => { await redis.quit().catch(() => redis.disconnect()); };
  } else if (options.sequelize) {
    limiter = new RateLimiterPostgres({
      ...common,
      storeClient: options.sequelize,
      storeType: 'sequelize',
      tableName: RATE_LIMIT_TABLE,
      tableCreated: true,
      clearExpiredByTimeout: false,
    });
    backend = 'postgres';
    const sequelize = options.sequelize;
    // Expired rows are reset in place by the next hit; sweep the ones nobody revisits.
    const sweep = setInterval(() => {
      sequelize.query(`DELETE FROM ${RATE_LIMIT_TABLE} WHERE expire < :before`, { replacements: { before: Date.now() - 3_600_000 } })
        .catch(() => { /* not critical */ });
    }, 5 * 60_000);
    sweep.unref();
    closeStore = async () => { clearInterval(sweep); };
  } else {
    limiter = new RateLimiterMemory({ points, duration, keyPrefix });
    backend = 'memory';
  }

  const decision = (res: RateLimiterRes, allowed: boolean): RateLimitDecision => ({
    allowed,
    limit: points,
    remaining: Math.max(0, res.remainingPoints),
    resetMs: Math.max(0, res.msBeforeNext),
  });

  return {
    backend,
    async consume(key) {
      try {
        return decision(await limiter.consume(key), true);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return decision(rejection, false);
        throw rejection;
      }
    },
    close: closeStore,
  };
}
