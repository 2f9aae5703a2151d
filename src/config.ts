import path from 'node:path';
import ipaddr from 'ipaddr.js';

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
  /** Runs one token (or user, without a token) may start per minute (RUN_RATE_LIMIT_PER_MINUTE); 0: no limit. */
  runRateLimitPerMinute: number;
  /** Sign-in attempts per account (username) per minute, from any address (SIGNIN_RATE_LIMIT_PER_MINUTE). */
  signInRateLimitPerMinute: number;
  /** Sign-in attempts per client IP per minute, whatever the username (SIGNIN_RATE_LIMIT_PER_CLIENT_PER_MINUTE). */
  signInRateLimitPerClientPerMinute: number;
  logLevel: string;
  /** Secret for signing local blob URLs and session cookies; generated into DATA_DIR when unset. */
  secret: string | undefined;
  blobMaxBytes: number;
  blobUrlTtlSeconds: number;
  httpStepAllowPrivate: boolean;
  /** Agenda lock lifetime; a run whose worker died is taken over after it. */
  jobLockLifetimeMs: number;
  /** Runs a worker claims at once (its run-job slots); claiming is quick, executing is detached (RUN_MAX_INFLIGHT). */
  jobConcurrency: number;
  /** Runs one worker process executes at once, waiting ones included (RUN_MAX_INFLIGHT, docs/runs.md). */
  runMaxInflight: number;
  /** Seconds a run waits (wait step, approval) in a worker's memory before it parks as a row (RUN_PARK_AFTER_S, docs/runs.md). */
  runParkAfterSeconds: number;
  /** Runs of one user executing at once across all workers; more wait PROVISIONED (USER_MAX_CONCURRENT_RUNS, docs/fairness.md). */
  userMaxConcurrentRuns: number;
  /** The most of one worker's RUN_MAX_INFLIGHT one user's runs may hold, in percent (RUN_USER_INFLIGHT_SHARE_PERCENT). */
  runUserInflightSharePercent: number;
  /** Webhook attempts in flight at once per receiver (host and port) in one worker (WEBHOOK_HOST_CONCURRENCY). */
  webhookHostConcurrency: number;
  /** The most of a worker's 50 webhook delivery slots one user's attempts may hold, in percent (WEBHOOK_USER_SHARE_PERCENT). */
  webhookUserSharePercent: number;
  /** Attempts in a row a receiver may leave unanswered before its deliveries pause (WEBHOOK_BREAKER_FAILURES). */
  webhookBreakerFailures: number;
  /** How long a receiver's deliveries pause once its breaker opens; doubles while it stays silent (WEBHOOK_BREAKER_OPEN_MS). */
  webhookBreakerOpenMs: number;
  /** Interval of keep-alive comments on server-sent event streams. */
  sseKeepAliveMs: number;
  /** Time a template/transform step (or any user expression) may run in the sandbox (STEP_CPU_MS). */
  stepCpuMs: number;
  /** The most of the sandbox's 4 isolates one user's steps hold at once (SANDBOX_USER_ISOLATES, docs/fairness.md). */
  sandboxUserIsolates: number;
  /** Heap ceiling of the sandbox that runs user logic (STEP_MEMORY_MB). */
  stepMemoryMb: number;
  /** Steps a run may execute, embedded runs included (RUN_MAX_STEPS). */
  runMaxSteps: number;
  /** Largest result_blob a run may produce, in bytes of JSON (RUN_MAX_RESULT_BYTES). */
  runMaxResultBytes: number;
  /**
   * Express `trust proxy`: the proxies whose X-Forwarded-For / -Proto is believed (addresses, CIDRs or
   * `loopback`, `linklocal`, `uniquelocal`). False (the default) trusts nobody: the client is the socket peer.
   */
  trustProxy: string[] | false;
  /** Browser origins allowed to call the API with a token (CORS_ORIGINS, docs/browsers.md); none by default. */
  corsOrigins: string[];
  /** Origin that absolute URLs are built from (download links); unset means `http://HOST:PORT` as listened. */
  publicUrl: string | undefined;
  /** Largest cost of one GraphQL operation (GRAPHQL_MAX_COST, src/graphql/operation-cost.ts). */
  graphqlMaxCost: number;
  /** Most tokens one GraphQL document may have, counted while it is parsed (GRAPHQL_MAX_TOKENS, src/graphql/document-bounds.ts). */
  graphqlMaxTokens: number;
  /** A graphql-sse stream reserved with PUT and not connected within this time is removed. */
  streamReservationTtlMs: number;
  /** Delay before a failed webhook delivery's first retry; each later one waits 3 times longer. */
  webhookRetryBaseMs: number;
  /** Attempts per webhook message before it is given up (with the defaults, about a day of retries). */
  webhookMaxAttempts: number;
  /** A worker process rewrites this file every few seconds while its job store answers (WORKER_HEARTBEAT_FILE). */
  workerHeartbeatFile: string | undefined;
  /** Default and ceiling of a run's deadline (query `deadline_s`). */
  runDeadlineSeconds: number;
  /** Step and output events older than this are deleted (state events stay with the run). */
  runEventsRetentionDays: number;
  /** Event streams (REST SSE, graphql-sse) one client (token user, else address) may hold open at once (STREAMS_PER_CLIENT). */
  streamsPerClient: number;
  /** Event streams an API process holds open at once for all clients (STREAMS_MAX). */
  streamsMax: number;
  /** A connection that accepts none of a pending response for this long is dropped (WRITE_STALL_MS). */
  writeStallMs: number;
  /** A request body not received in full within this time is answered 408 and the connection closed (BODY_TIMEOUT_MS). */
  bodyTimeoutMs: number;
  /** Start beside another service that owns the embedded PostgreSQL of DATA_DIR instead of refusing (CIRCUIT_JOIN). */
  join: boolean;
}

/** Every problem found in the environment, one line each (the message joins them with newlines). */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

/** What loadConfig reads besides the shared settings. */
export interface LoadConfigOptions {
  /** False for processes that serve no HTTP (the worker): PORT and HOST are neither read nor checked. */
  http?: boolean;
}

/**
 * Problems found by the reading helpers while loadConfig runs (it is synchronous): each helper records
 * its problem and returns the fallback, so one start reports every bad variable at once.
 */
let problems: string[] | undefined;

function problem<T>(message: string, fallback: T): T {
  if (!problems) throw new ConfigError([message]);
  problems.push(message);
  return fallback;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) return problem(`${name} must be a whole number, got "${raw}"`, fallback);
  const value = Number(raw);
  if (value < min || value > max) return problem(`${name} must be between ${min} and ${max}, got ${value}`, fallback);
  return value;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  return problem(`${name} must be true or false, got "${raw}"`, fallback);
}

function url(env: NodeJS.ProcessEnv, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return problem(`${name} is not a valid URL`, undefined);
  }
  if (!protocols.includes(parsed.protocol)) {
    return problem(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}`, undefined);
  }
  return raw;
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function isAddressOrRange(entry: string): boolean {
  const [address, prefix, extra] = entry.split('/');
  const v4 = ipaddr.IPv4.isValidFourPartDecimal(address);
  if (extra !== undefined || (!v4 && !ipaddr.IPv6.isValid(address))) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (v4 ? 32 : 128));
}

function trustProxy(env: NodeJS.ProcessEnv): string[] | false {
  const raw = env.TRUST_PROXY?.trim();
  if (!raw) return false;
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const bad = entries.find((entry) => !PROXY_NAMES.includes(entry) && !isAddressOrRange(entry));
  if (bad !== undefined)
    return problem(
      `TRUST_PROXY must list proxy addresses, CIDR ranges or ${PROXY_NAMES.join('/')}, got "${bad}"`,
      false,
    );
  return entries;
}

function publicUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = url(env, 'PUBLIC_URL', ['http:', 'https:']);
  if (!raw) return undefined;
  const parsed = new URL(raw);
  if (parsed.pathname !== '/' || parsed.search || parsed.hash || parsed.username || parsed.password) {
    return problem('PUBLIC_URL must be an origin only, like https://circuits.example.com', undefined);
  }
  return parsed.origin;
}

function corsOrigins(env: NodeJS.ProcessEnv): string[] {
  const entries = (env.CORS_ORIGINS ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const origins: string[] = [];
  for (const entry of entries) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(entry);
    } catch {
      parsed = undefined;
    }
    // Browsers send an origin as scheme://host[:port], lower-cased, without a default port: compare exactly that.
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || entry.replace(/\/$/, '') !== parsed.origin) {
      return problem(`CORS_ORIGINS must list origins like https://app.example.com, got "${entry}"`, []);
    }
    origins.push(parsed.origin);
  }
  return [...new Set(origins)];
}

/**
 * Reads and validates the environment; throws one ConfigError listing every bad variable, one line each.
 * New settings: one line in `readConfig` with the helpers above (they record problems, never throw).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, options: LoadConfigOptions = {}): Config {
  const found: string[] = [];
  problems = found;
  try {
    const config = readConfig(env, options.http ?? true);
    if (found.length > 0) throw new ConfigError(found);
    return config;
  } finally {
    problems = undefined;
  }
}

/** Warnings worth a log line at start: settings that are valid but will make some runs fail. */
export function configWarnings(config: Config): string[] {
  const warnings: string[] = [];
  if (config.openaiApiKey === OPENAI_API_KEY_UNSET) {
    warnings.push(
      config.openaiBaseUrl === DEFAULT_OPENAI_BASE_URL
        ? 'OPENAI_API_KEY is unset: llm steps will fail until it is set'
        : `OPENAI_API_KEY is unset: llm steps will fail unless ${new URL(config.openaiBaseUrl).host} needs no key`,
    );
  }
  return warnings;
}

const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** Placeholder key (the OpenAI client refuses an empty one); configWarnings reports it. */
export const OPENAI_API_KEY_UNSET = 'unset';

function readConfig(env: NodeJS.ProcessEnv, http: boolean): Config {
  let logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) logLevel = problem(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`, 'info');
  return {
    port: http ? int(env, 'PORT', 4000, 0, 65535) : 4000,
    host: http ? env.HOST || '127.0.0.1' : '127.0.0.1',
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    dataDir: path.resolve(env.DATA_DIR || './.data'),
    mongodbUrl: url(env, 'MONGODB_URL', ['mongodb:', 'mongodb+srv:']),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    runWorker: bool(env, 'RUN_WORKER', true),
    gcsBucket: env.GCS_BUCKET || undefined,
    openaiBaseUrl: url(env, 'OPENAI_BASE_URL', ['http:', 'https:']) ?? DEFAULT_OPENAI_BASE_URL,
    openaiApiKey: env.OPENAI_API_KEY || OPENAI_API_KEY_UNSET,
    searchRateLimitPerMinute: int(env, 'SEARCH_RATE_LIMIT_PER_MINUTE', 60, 1),
    runRateLimitPerMinute: int(env, 'RUN_RATE_LIMIT_PER_MINUTE', 600, 0),
    signInRateLimitPerMinute: int(env, 'SIGNIN_RATE_LIMIT_PER_MINUTE', 10, 1),
    signInRateLimitPerClientPerMinute: int(env, 'SIGNIN_RATE_LIMIT_PER_CLIENT_PER_MINUTE', 30, 1),
    logLevel,
    secret: env.SECRET_KEY || undefined,
    blobMaxBytes: int(env, 'BLOB_MAX_BYTES', 25 * 1024 * 1024, 1),
    blobUrlTtlSeconds: int(env, 'BLOB_URL_TTL_SECONDS', 300, 1, 7 * 24 * 3600),
    httpStepAllowPrivate: bool(env, 'HTTP_STEP_ALLOW_PRIVATE', false),
    jobLockLifetimeMs: int(env, 'JOB_LOCK_LIFETIME_MS', 60_000, 1000),
    jobConcurrency: int(env, 'JOB_CONCURRENCY', 20, 1, 1000),
    runMaxInflight: int(env, 'RUN_MAX_INFLIGHT', 10_000, 1, 1_000_000),
    runParkAfterSeconds: int(env, 'RUN_PARK_AFTER_S', 30, 0, 86_400),
    userMaxConcurrentRuns: int(env, 'USER_MAX_CONCURRENT_RUNS', 1000, 1, 1_000_000),
    runUserInflightSharePercent: int(env, 'RUN_USER_INFLIGHT_SHARE_PERCENT', 50, 1, 100),
    webhookHostConcurrency: int(env, 'WEBHOOK_HOST_CONCURRENCY', 4, 1, 1000),
    webhookUserSharePercent: int(env, 'WEBHOOK_USER_SHARE_PERCENT', 50, 1, 100),
    webhookBreakerFailures: int(env, 'WEBHOOK_BREAKER_FAILURES', 5, 1, 1000),
    webhookBreakerOpenMs: int(env, 'WEBHOOK_BREAKER_OPEN_MS', 30_000, 100, 3_600_000),
    sseKeepAliveMs: int(env, 'SSE_KEEP_ALIVE_MS', 15_000, 50, 600_000),
    stepCpuMs: int(env, 'STEP_CPU_MS', 1000, 10, 60_000),
    sandboxUserIsolates: int(env, 'SANDBOX_USER_ISOLATES', 2, 1, 4),
    stepMemoryMb: int(env, 'STEP_MEMORY_MB', 64, 16, 4096),
    runMaxSteps: int(env, 'RUN_MAX_STEPS', 1000, 1, 1_000_000),
    runMaxResultBytes: int(env, 'RUN_MAX_RESULT_BYTES', 4 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    trustProxy: http ? trustProxy(env) : false,
    publicUrl: publicUrl(env),
    corsOrigins: http ? corsOrigins(env) : [],
    graphqlMaxCost: int(env, 'GRAPHQL_MAX_COST', 1000, 1),
    graphqlMaxTokens: int(env, 'GRAPHQL_MAX_TOKENS', 2000, 100, 100_000),
    streamReservationTtlMs: int(env, 'GRAPHQL_STREAM_RESERVATION_TTL_MS', 30_000, 100, 3_600_000),
    webhookRetryBaseMs: int(env, 'WEBHOOK_RETRY_BASE_MS', 10_000, 10, 3_600_000),
    webhookMaxAttempts: int(env, 'WEBHOOK_MAX_ATTEMPTS', 10, 1, 30),
    workerHeartbeatFile: env.WORKER_HEARTBEAT_FILE ? path.resolve(env.WORKER_HEARTBEAT_FILE) : undefined,
    runDeadlineSeconds: int(env, 'RUN_DEADLINE_SECONDS', 600, 1, 3600),
    runEventsRetentionDays: int(env, 'RUN_EVENTS_RETENTION_DAYS', 7, 1, 3650),
    streamsPerClient: int(env, 'STREAMS_PER_CLIENT', 20, 1, 100_000),
    streamsMax: int(env, 'STREAMS_MAX', 2_000, 1, 1_000_000),
    writeStallMs: int(env, 'WRITE_STALL_MS', 30_000, 100, 3_600_000),
    bodyTimeoutMs: int(env, 'BODY_TIMEOUT_MS', 10_000, 100, 3_600_000),
    join: bool(env, 'CIRCUIT_JOIN', false),
  };
}
