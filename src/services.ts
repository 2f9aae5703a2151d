import type { Sequelize } from 'sequelize';
import type { Config } from './config';
import type { Logger } from './logger';
import type { RateLimiter } from './ratelimit';

/**
 * The long-lived pieces a request may use, built once by the composition root (src/app.ts) and
 * handed to every GraphQL context. Each domain adds its piece here.
 */
export interface Services {
  config: Config;
  sequelize: Sequelize;
  log: Logger;
  /** Counts searches per client across processes (PostgreSQL, or Redis when REDIS_URL is set). */
  searchRateLimiter: RateLimiter;
}
