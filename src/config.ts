import path from 'node:path';

/** Everything the service reads from its environment, validated once at start. */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  mongodbUrl: string | undefined;
  redisUrl: string | undefined;
  runWorker: boolean;
  gcsBucket: string | undefined;
  openaiBaseUrl: string;
  openaiApiKey: string;
  searchRateLimitPerMinute: number;
  signInRateLimitPerMinute: number;
  logLevel: string;
  /** Secret for signing local blob URLs and session cookies; generated into DATA_DIR when unset. */
  secret: string | undefined;
  blobMaxBytes: number;
  blobUrlTtlSeconds: number;
  httpStepAllowPrivate: boolean;
  /** Agenda lock lifetime; a run whose worker died is taken over after it. */
  jobLockLifetimeMs: number;
  jobConcurrency: number;
  /** Interval of keep-alive comments on server-sent event streams. */
  sseKeepAliveMs: number;
}

export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function url(env: NodeJS.ProcessEnv, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  return raw;
}

/** Reads and validates the environment; throws ConfigError with one clear line on bad input. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const host = env.HOST || '127.0.0.1';
  return {
    port: int(env, 'PORT', 4000, 0, 65535),
    host,
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    dataDir: path.resolve(env.DATA_DIR || './.data'),
    mongodbUrl: url(env, 'MONGODB_URL', ['mongodb:', 'mongodb+srv:']),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    runWorker: bool(env, 'RUN_WORKER', true),
    gcsBucket: env.GCS_BUCKET || undefined,
    openaiBaseUrl: url(env, 'OPENAI_BASE_URL', ['http:', 'https:']) ?? 'https://api.openai.com/v1',
    openaiApiKey: env.OPENAI_API_KEY || 'unset',
    searchRateLimitPerMinute: int(env, 'SEARCH_RATE_LIMIT_PER_MINUTE', 60, 1),
    signInRateLimitPerMinute: int(env, 'SIGNIN_RATE_LIMIT_PER_MINUTE', 10, 1),
    logLevel,
    secret: env.SECRET_KEY || undefined,
    blobMaxBytes: int(env, 'BLOB_MAX_BYTES', 25 * 1024 * 1024, 1),
    blobUrlTtlSeconds: int(env, 'BLOB_URL_TTL_SECONDS', 300, 1, 7 * 24 * 3600),
    httpStepAllowPrivate: bool(env, 'HTTP_STEP_ALLOW_PRIVATE', false),
    jobLockLifetimeMs: int(env, 'JOB_LOCK_LIFETIME_MS', 60_000, 1000),
    jobConcurrency: int(env, 'JOB_CONCURRENCY', 20, 1, 1000),
    sseKeepAliveMs: int(env, 'SSE_KEEP_ALIVE_MS', 15_000, 50, 600_000),
  };
}
