import { startTracing } from './telemetry/tracing';
import './debug-colors';
import 'reflect-metadata';
import { createLogger } from './logger';
import { resolveDatabase } from './db/resolve-database';
import { startApp } from './app';
import { closeOnSignals, loadConfigOrExit, logConfigWarnings } from './lifecycle';
import { startWorkerThread, type WorkerThread } from './worker-thread';

async function main(): Promise<void> {
  const config = loadConfigOrExit('circuit-service');
  const log = createLogger(config.logLevel);
  // Traces (docs/telemetry.md) only with OTEL_EXPORTER_OTLP_ENDPOINT set; the worker thread starts its own.
  const tracing = startTracing(log);
  // One service per data directory: a second `npm start` on the same files refuses unless told to join.
  const database = await resolveDatabase(config, (message, level) => log[level]({ component: 'postgres' }, message), {
    exclusive: !config.join,
  });
  // After the refusal above, which is then the one line a second start prints.
  if (config.runWorker) logConfigWarnings(config, log);
  // The API serves in this thread; with RUN_WORKER (the default) a run worker runs in a thread of its own.
  let worker: WorkerThread | undefined;
  const app = await startApp({ config: { ...config, runWorker: false }, databaseUrl: database.url, log })
    .then(async (started) => {
      if (config.runWorker)
        worker = await startWorkerThread(database, log).catch(async (error: unknown) => {
          await started.close();
          throw error;
        });
      return started;
    })
    .catch(async (error: unknown) => {
      // A failed start (a taken port, say) must not leave the embedded PostgreSQL running behind it.
      await database.stop().catch(() => {});
      throw error;
    });
  // Handled before the service says it is ready: a signal sent on that line must find a handler, not the
  // default that kills the process at once and leaves the embedded PostgreSQL behind.
  closeOnSignals(
    log,
    'service',
    async () => {
      await app.close();
      await worker?.close();
      await tracing?.shutdown();
      await database.stop();
    },
    15_000,
    () => database.stop(),
  );
  log.info(
    { url: app.url, graphql: `${app.url}/graphql`, rest: `${app.url}/api/v1`, ...database.logFields },
    'circuit service ready',
  );
}

main().catch((error: unknown) => {
  console.error(`circuit-service: failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
