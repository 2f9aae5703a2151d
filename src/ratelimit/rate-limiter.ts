import type * as IoRedis from 'ioredis';
import { LRUCache } from 'lru-cache';
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
  /** The quota policy the RateLimit-Policy field announces: its name (the key prefix), quota and window. */
  readonly policy: { name: string; quota: number; windowSeconds: number };
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
    // Loaded only here: without REDIS_URL no process needs the client.
    const { Redis } = require('ioredis') as typeof IoRedis;
    const redis = new Redis(options.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      lazyConnect: false,
    });
    redis.on('error', (err) => options.log?.warn({ err }, 'rate limiter: Redis error; counting in memory meanwhile'));
    limiter = new RateLimiterRedis({ ...common, storeClient: redis, rejectIfRedisNotReady: true });
    backend = 'redis';
    closeStore = async () => {
      await redis.quit().catch(() => redis.disconnect());
    };
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
      sequelize
        .query(`DELETE FROM ${RATE_LIMIT_TABLE} WHERE expire < :before`, {
          replacements: { before: Date.now() - 3_600_000 },
        })
        .catch(() => {
          /* not critical */
        });
    }, 5 * 60_000);
    sweep.unref();
    closeStore = async () => {
      clearInterval(sweep);
    };
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

  const take = async (key: string, count: number): Promise<{ res: RateLimiterRes; allowed: boolean }> => {
    try {
      return { res: await limiter.consume(key, count), allowed: true };
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return { res: rejection, allowed: false };
      throw rejection;
    }
  };

  // Leases: a process takes points from the shared store a few at a time and hands them out locally,
  // so a busy client costs one store round trip per lease instead of one per request. A lease is at
  // most 1/LEASE_SHARE of what the store still allows (never more than MAX_LEASE), so near the limit
  // leases are single points and counting is exact; far from it, a process may hold a few points it
  // has not used yet (counted as used by the others). Nothing is ever allowed that the store did not grant,
  // so forgetting the least recently used keys' leases (the bound) only forgoes points already taken.
  const leases = new LRUCache<string, { left: number; storeRemaining: number; resetAt: number; nextSize: number }>({
    max: MAX_TRACKED_KEYS,
  });
  const taking = new Map<string, Promise<unknown>>();

  const consumeLeased = async (key: string): Promise<RateLimitDecision> => {
    for (;;) {
      const now = Date.now();
      const lease = leases.get(key);
      if (lease && lease.left > 0 && lease.resetAt > now) {
        lease.left--;
        return {
          allowed: true,
          limit: points,
          remaining: lease.storeRemaining + lease.left,
          resetMs: lease.resetAt - now,
        };
      }
      const pending = taking.get(key);
      if (pending) {
        await pending.catch(() => {});
        continue;
      }
      const size = Math.min(lease?.nextSize ?? 1, MAX_LEASE);
      const request = take(key, size);
      taking.set(key, request);
      try {
        const { res, allowed } = await request;
        const storeRemaining = Math.max(0, res.remainingPoints);
        if (!allowed) {
          leases.delete(key);
          return decision(res, false);
        }
        // This request takes the first point of the lease.
        leases.set(key, {
          left: size - 1,
          storeRemaining,
          resetAt: now + res.msBeforeNext,
          nextSize: Math.max(1, Math.floor(storeRemaining / LEASE_SHARE)),
        });
        return {
          allowed: true,
          limit: points,
          remaining: storeRemaining + size - 1,
          resetMs: Math.max(0, res.msBeforeNext),
        };
      } finally {
        taking.delete(key);
      }
    }
  };

  return {
    backend,
    policy: { name: keyPrefix, quota: points, windowSeconds: duration },
    consume: consumeLeased,
    close: closeStore,
  };
}

/** Leases are at most this share of the points the store still allows... */
const LEASE_SHARE = 64;
/** ...and at most this many points. */
const MAX_LEASE = 50;
const MAX_TRACKED_KEYS = 10_000;
