import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Config } from './config';
import { createLogger, Logger } from './logger';
import { createSequelize } from './db/sequelize';
import { migrate } from './db/migrate';
import { initModels } from './models';
import { buildGraphqlSchema } from './graphql/schema';
import { mountGraphiql } from './http/graphiql';
import { mountLandingPage } from './http/landing-page';
import { mountFavicon } from './http/favicon';
import { createMetrics, mountObservability } from './http/observability';
import { loadOperations, assertOperationsValid } from '../rest-bridge/operations';
import { API_PREFIX, mountRestBridge } from '../rest-bridge/express';
import { authenticateRoutes } from './http/rest-authentication';
import { mountApiReference } from './http/api-docs';
import { prepareDefinitionValidation } from './engine/validate-definition';
import { createJsonSchemaService } from './engine/json-schemas';
import { Sandbox } from './sandbox/sandbox';
import { routes } from '../rest-bridge/routes';
import type { ApiServices } from './graphql/context';
import { startRuntime, type Runtime } from './runtime';
import { createBlobStorage } from './storage';
import { mountWeb } from './web';
import { createRunRateLimiter, createSearchRateLimiter } from './ratelimit';
import { SearchCache, startSearchInvalidation } from './graphql/search/search.cache';
import { startTokenInvalidation, TokenCache } from './auth/token-cache';
import { startRunReadInvalidation } from './runs';
import { mountRunEvents, RUN_EVENTS_PATH } from './http/run-events.sse';
import { cors, pathMatcher } from './http/cors';
import { mountGraphqlStream } from './http/graphql-stream';
import { createApollo, mountGraphql } from './http/graphql';
import { AppError } from './errors';
import { jsonBody, jsonErrors } from './http/json-body';
import { antiFraming } from './http/anti-framing';
import { OpenStreams } from './streams/open-streams';
import { SharedTexts } from './streams/paced-write';
import { dropStalledReaders } from './http/write-stall';
import { StreamAuthority } from './auth/stream-authority';
import { CALLBACK_PATH, mountWaitCallbacks } from './http/wait-callbacks';
import { mountDecisionPages } from './web/decision-page';
import { MCP_PATH, mountMcp } from './mcp/http';
import { mountOAuth } from './oauth/routes';
import { ClientDirectory } from './oauth/clients';
import { fetchClientMetadataDocument } from './oauth/client-metadata-document';
import { mountA2a } from './a2a/http';

export interface RunningApp {
  url: string;
  /** What the API layers use (the GraphQL context's `services`). */
  services: ApiServices;
  /** What lies under them: the run wing, the queue's health, the bus, the run metrics (src/runtime.ts). */
  runtime: Runtime;
  server: http.Server;
  close(): Promise<void>;
}

export interface AppOptions {
  config: Config;
  databaseUrl: string;
  log?: Logger;
}

/**
 * Composes the service: database and models, the GraphQL schema on /graphql, the REST bridge on
 * /api/v1, health and metrics; then listens. `close()` undoes it all in reverse order.
 */
export async function startApp({
  config,
  databaseUrl,
  log = createLogger(config.logLevel),
}: AppOptions): Promise<RunningApp> {
  const sequelize = createSequelize(databaseUrl);
  initModels(sequelize);
  await migrate(sequelize);

  const searchRateLimiter = createSearchRateLimiter(config, sequelize, log);
  const runRateLimiter = createRunRateLimiter(config, sequelize, log);
  const searchCache = new SearchCache();
  const stopSearchInvalidation = await startSearchInvalidation(searchCache, databaseUrl, log);
  const tokenCache = new TokenCache();
  const stopTokenInvalidation = await startTokenInvalidation(tokenCache, databaseUrl, log);
  const schemas = createJsonSchemaService();
  const sandbox = new Sandbox();
  const blobStorage = createBlobStorage(config);
  const runtime = await startRuntime({
    config,
    sequelize,
    log,
    databaseUrl,
    worker: config.runWorker ? { blobStorage } : null,
    schemas,
    sandbox,
  });
  const stopRunReadInvalidation = await startRunReadInvalidation(runtime.runs.readCache, databaseUrl, log);
  const authority = new StreamAuthority(sequelize, log);
  await authority.start(databaseUrl);
  const streams = {
    open: new OpenStreams({ perClient: config.streamsPerClient, total: config.streamsMax }),
    authority,
    texts: new SharedTexts(),
  };
  const services: ApiServices = {
    config,
    sequelize,
    log,
    searchRateLimiter,
    runRateLimiter,
    blobStorage,
    schemas,
    sandbox,
    tokenCache,
    searchCache,
    streams,
    runs: runtime.runs,
    schedules: runtime.schedules,
  };
  const schema = await buildGraphqlSchema();
  prepareDefinitionValidation();
  const operations = loadOperations();
  assertOperationsValid(schema, operations);

  const app = express();
  app.disable('x-powered-by');
  // Whose X-Forwarded-For decides req.ip (rate limits, logs): nobody's unless TRUST_PROXY names them.
  app.set('trust proxy', config.trustProxy);
  const metrics = createMetrics();
  mountObservability(app, log, metrics);
  const signedEvents = pathMatcher(RUN_EVENTS_PATH);
  const callback = pathMatcher(CALLBACK_PATH);
  app.use(
    cors({
      origins: config.corsOrigins,
      prefixes: [API_PREFIX, '/graphql'],
      anyOrigin: (req) => callback(req.path) || (signedEvents(req.path) && req.query.signature !== undefined),
    }),
  );
  app.use(antiFraming());
  // A route of the REST table that needs a token answers 401 before its body is read or checked.
  app.use(API_PREFIX, authenticateRoutes(routes, services));
  // A2A checks its token before its body is read, then parses the body itself.
  mountA2a(app, services);
  app.use(jsonBody({ timeoutMs: config.bodyTimeoutMs }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await sequelize.query('SELECT 1');
      if (!(await runtime.queue.ping())) throw new Error('job store unreachable');
      res.json({ status: 'ready' });
    } catch {
      res.status(503).json({ status: 'unavailable' });
    }
  });
  app.get('/metrics', async (_req, res) => {
    // The run metrics (docs/telemetry.md) of every process, from their totals in PostgreSQL.
    res
      .type(metrics.registry.contentType)
      .send(`${await metrics.registry.metrics()}\n${await runtime.runMetrics.text()}`);
  });

  // The REST paths first: a request walks the app's routes in order until one matches, and these are
  // the ones clients poll. Every other mount has its own path, so the order changes nothing else.
  mountRunEvents(app, schema, operations, services);
  mountWaitCallbacks(app, services);
  mountDecisionPages(app, services);
  mountApiReference(app, API_PREFIX);
  mountRestBridge(app, schema, operations, routes, services);
  mountMcp(app, services);
  const oauth = {
    config,
    sequelize,
    resourcePath: MCP_PATH,
    clients: new ClientDirectory(sequelize, (url) => fetchClientMetadataDocument(url)),
  };
  mountOAuth(app, oauth);
  const server = http.createServer(app);
  const stopStallSweep = dropStalledReaders(server, config.writeStallMs, log);
  const apollo = createApollo(schema, services, server);
  await apollo.start();
  mountLandingPage(app);
  mountFavicon(app);
  mountGraphiql(app);
  const stream = mountGraphqlStream(app, schema, services);
  mountGraphql(app, apollo, services);
  const web = mountWeb(app, services, oauth);
  // Past every mount, an unknown path answers the error envelope too (Express's own 404 is an HTML page).
  app.use((_req, _res, next) => next(new AppError('NotFound', 'No such route')));
  app.use(jsonErrors());

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // Open streams first (a last event, then close): followers would otherwise hold the stop.
      streams.open.endAll('shutdown');
      await authority.stop();
      server.closeIdleConnections();
      stopStallSweep();
      stream.close();
      await apollo.stop();
      await runtime.close();
      await searchRateLimiter.close();
      await runRateLimiter?.close();
      await stopSearchInvalidation();
      await stopTokenInvalidation();
      await stopRunReadInvalidation();
      await web.close();
      await Promise.all([schemas.close(), sandbox.close()]);
      await sequelize.close();
    })());

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
  } catch (error) {
    // A taken port, say: stop what was started (jobs, listeners, pools) before reporting it.
    await close().catch(() => {});
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  // PUBLIC_URL's default is the address as listened (the port is only known now when PORT=0).
  config.publicUrl ??= url;
  return { url, services, runtime, server, close };
}
