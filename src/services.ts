import type { Sequelize } from 'sequelize';
import type { Config } from './config';
import type { Logger } from './logger';
import type { BlobStorage } from './storage';
import type { RateLimiter } from './ratelimit';
import type { RunQueue } from './queue/agenda';
import type { RunEventBus } from './runs/events/bus';
import type { RunService } from './runs/run-service';
import type { RunMetricsStore } from './telemetry/run-metrics';
import type { StreamServices } from './http/open-streams';
import type { JsonSchemaService } from './engine/json-schemas';
import type { TokenCache } from './auth/token-cache';
import type { Sandbox } from './sandbox/sandbox';
import type { SearchCache } from './graphql/search/search.cache';

/**
 * The long-lived pieces a request may use, built once by the composition root (src/app.ts) and
 * handed to every GraphQL context. Each domain adds its piece here.
 */
export interface Services {
  config: Config;
  sequelize: Sequelize;
  log: Logger;
  /** Blob content: GCS when GCS_BUCKET is set, else the data dir (src/storage). */
  blobStorage: BlobStorage;
  /** Counts searches per client across processes (PostgreSQL, or Redis when REDIS_URL is set). */
  searchRateLimiter: RateLimiter;
  /** Counts run creations per token (DESIGN §12, RUN_RATE_LIMIT_PER_MINUTE); null when the limit is off. */
  runRateLimiter: RateLimiter | null;
  /** Queues runs for execution (Agenda on PostgreSQL, or MongoDB when MONGODB_URL is set). */
  runQueue: RunQueue;
  /** Run-state changes across processes (PostgreSQL LISTEN/NOTIFY, or Redis when REDIS_URL is set). */
  runEvents: RunEventBus;
  /** Search pages of this process, cleared on `search_changed` (src/graphql/search/search.cache.ts); absent without HTTP. */
  searchCache?: SearchCache;
  /** The run wing's batched writes and read caches of this process (src/runs/run-service.ts). */
  runs: RunService;
  /** The isolates that run user logic: JSONata, Handlebars, their syntax check at publish (src/sandbox/sandbox.ts). */
  sandbox: Sandbox;
  /** The compile check of published schemas and the compiled query and output schemas (src/engine/json-schemas.ts). */
  schemas: JsonSchemaService;
  /** Bearer tokens already read, dropped on `auth_changed` (src/auth/token-cache.ts; kept current by the API's listener); absent without HTTP. */
  tokenCache?: TokenCache;
  /** This thread's run metrics, added to the totals of every process; /metrics reads those (src/telemetry/run-metrics.ts). */
  runMetrics: RunMetricsStore;
  /** The API's open event streams: caps, shutdown, authority re-checks (src/http/open-streams.ts); absent without HTTP. */
  streams?: StreamServices;
}
