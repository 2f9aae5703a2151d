import crypto from 'node:crypto';
import type { Request } from 'express';
import { authenticate, Authentication } from '../auth/authenticate';
import type { User } from '../models';
import type { Sequelize } from 'sequelize';
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { BlobStorage } from '../storage';
import type { RateLimiter } from '../ratelimit';
import type { JsonSchemaService } from '../engine/json-schemas';
import type { Sandbox } from '../sandbox/sandbox';
import type { TokenCache } from '../auth/token-cache';
import type { RunWing } from '../runs';
import type { ScheduleDeps } from '../schedules/ports';
import type { StreamServices } from '../streams/open-streams';
import type { SearchCache } from './search/search.cache';
import type { Held } from '../streams/paced-write';
import { createLoaders, Loaders } from './loaders';

export interface Notice {
  code: string;
  message: string;
}

/**
 * What the API layers share (GraphQL resolvers, the REST bridge, SSE, MCP, the /settings pages), built
 * once by the API's composition (src/app.ts): the floors below, narrowed to what a request may use,
 * and the transport's own state (streams, caches, rate limiters).
 */
export interface ApiServices {
  config: Config;
  sequelize: Sequelize;
  log: Logger;
  /** Blob content: GCS when GCS_BUCKET is set, else the data dir (src/storage). */
  blobStorage: BlobStorage;
  /** The isolates that run user logic: here, the syntax check of a metric at publish (src/sandbox/sandbox.ts). */
  sandbox: Sandbox;
  /** The compile check of published schemas and the compiled query schemas (src/engine/json-schemas.ts). */
  schemas: JsonSchemaService;
  /** Counts searches per client across processes (PostgreSQL, or Redis when REDIS_URL is set). */
  searchRateLimiter: RateLimiter;
  /** Counts run creations per token (RUN_RATE_LIMIT_PER_MINUTE); null when the limit is off. */
  runRateLimiter: RateLimiter | null;
  /** Search pages of this process, cleared on `search_changed` (src/graphql/search/search.cache.ts). */
  searchCache?: SearchCache;
  /** Bearer tokens already read, dropped on `auth_changed` (src/auth/token-cache.ts). */
  tokenCache?: TokenCache;
  /** The API's open event streams: caps, shutdown, authority re-checks (src/http/open-streams.ts). */
  streams?: StreamServices;
  /** The run wing's front door (src/runs/index.ts). */
  runs: RunWing;
  /** What schedule commands use (src/schedules/). */
  schedules: ScheduleDeps;
}

/** What every resolver receives; built the same way for /graphql, the REST bridge and SSE. */
export interface AppContext {
  requestId: string;
  auth: Authentication;
  viewer: User | null;
  clientIp: string;
  services: ApiServices;
  loaders: Loaders;
  /** Notices for the response (e.g. deprecation); REST puts them beside `payload`. */
  notices: Notice[];
  /** Headers a resolver wants on the HTTP response (Retry-After, RateLimit-*, Deprecation). */
  responseHeaders: Record<string, string>;
  /** The service's public origin (PUBLIC_URL), for absolute URLs. */
  baseUrl: string;
  /** The request's W3C `traceparent` header (docs/telemetry.md), for the runs it creates. */
  traceparent?: string;
  /**
   * Where the bytes of this request's answer are kept for every request answered the same, keyed by
   * whoever serialises it (the REST bridge: by route, on routes that say `sharesAnswer`). Set by a
   * resolver whose result follows only from data that no longer changes (an ended run's kept rows)
   * and from what this viewer may see of it (src/graphql/run/run.access.ts). Whether the viewer may
   * read at all is decided by the policy on every request, before this is set.
   */
  sharedAnswers?: Map<string, Held>;
}

/** PUBLIC_URL, else `http://HOST:PORT` as listened — never the request's Host header, which the client writes. */
function publicBaseUrl(services: ApiServices): string {
  const { publicUrl, host, port } = services.config;
  return publicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** `auth` when the caller has already authenticated the request (graphql-sse does, to answer 401 early). */
export async function buildContext(
  services: ApiServices,
  req: Pick<Request, 'headers' | 'ip'> & { id?: unknown },
  auth?: Authentication,
): Promise<AppContext> {
  auth ??= await authenticate(services.tokenCache, req.headers.authorization);
  return {
    requestId: typeof req.id === 'string' ? req.id : crypto.randomUUID(),
    auth,
    viewer: auth.kind === 'token' ? auth.user : null,
    clientIp: req.ip ?? 'unknown',
    services,
    loaders: createLoaders(services.runs),
    notices: [],
    responseHeaders: {},
    baseUrl: publicBaseUrl(services),
    ...(typeof req.headers.traceparent === 'string' ? { traceparent: req.headers.traceparent } : {}),
  };
}

/** Adds a notice; a deprecation also sets `Deprecation: @<epoch seconds>` (RFC 9745), the earliest when several. */
export function addNotice(ctx: AppContext, notice: Notice, deprecatedAt?: Date | null): void {
  if (!ctx.notices.some((n) => n.code === notice.code && n.message === notice.message)) ctx.notices.push(notice);
  if (notice.code === 'deprecated') {
    const seconds = Math.floor((deprecatedAt ?? new Date()).getTime() / 1000);
    const current = ctx.responseHeaders['Deprecation'];
    if (!current || seconds < Number(current.slice(1))) ctx.responseHeaders['Deprecation'] = `@${seconds}`;
  }
}
