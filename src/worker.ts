import { startTracing } from './telemetry/tracing';
import './debug-colors';
import 'reflect-metadata';
import fs from 'node:fs';
import type { Config } from './config';
import { createLogger, type Logger } from './logger';
import { resolveDatabase, type DatabaseLogFields } from './db/resolve-database';
import { createSequelize } from './db/sequelize';
import { migrate } from './db/migrate';
import { initModels } from './models';
import { createBlobStorage } from './storage';
import { createJsonSchemaService } from './engine/json-schemas';
import { Sandbox } from './sandbox/sandbox';
import { startRuntime, type Runtime } from './runtime';
import { closeOnSignals, loadConfigOrExit, logConfigWarnings } from './lifecycle';

export interface WorkerProcess {
  /** What the worker composed (src/runtime.ts): the run wing, the queue's health, the bus, the run metrics. */
  runtime: Runtime;
  close(): Promise<void>;
}

/**
 * A worker without HTTP: executes queued runs (and sweeps for lost ones) against the service's
 * database. Used by `npm run worker`, `circuits worker` and `node dist/src/worker.js`.
 */
export async function startWorkerProcess(
  config: Config,
  log: Logger = createLogger(config.logLevel),
  options: { databaseLogFields?: DatabaseLogFields } = {},
): Promise<WorkerProcess> {
  logConfigWarnings(config, log);
  const database = await resolveDatabase(config, (message, level) => log[level]({ component: 'postgres' }, message));
  const sequelize = createSequelize(database.url, Math.min(50, config.jobConcurrency + 5));
  try {
    initModels(sequelize);
    await migrate(sequelize);
    const schemas = createJsonSchemaService();
    const sandbox = new Sandbox();
    const runtime = await startRuntime({
      config,
      sequelize,
      log,
      databaseUrl: database.url,
      worker: { blobStorage: createBlobStorage(config) },
      schemas,
      sandbox,
    });
    log.info(
      {
        ...(options.databaseLogFields ?? database.logFields),
        jobStore: runtime.queue.backendName,
        concurrency: config.jobConcurrency,
      },
      'circuit worker ready',
    );
    const heartbeat = config.workerHeartbeatFile
      ? startHeartbeat(config.workerHeartbeatFile, () => runtime.queue.ping())
      : undefined;
    let closing: Promise<void> | undefined;
    return {
      runtime,
      close: () =>
        (closing ??= (async () => {
          heartbeat?.stop();
          await runtime.close();
          await Promise.all([schemas.close(), sandbox.close()]);
          await sequelize.close();
          await database.stop();
        })()),
    };
  } catch (error) {
    await sequelize.close().catch(() => {});
    await database.stop().catch(() => {});
    throw error;
  }
}

/** How often the heartbeat file is rewritten; a healthcheck calls a worker dead after a few missed beats. */
export const HEARTBEAT_EVERY_MS = 5_000;

/**
 * The worker's liveness signal for an operator or a container healthcheck (it serves no HTTP): a
 * small JSON file rewritten every few seconds while the job store answers. Stale = stuck or cut off.
 */
function startHeartbeat(file: string, ping: () => Promise<boolean>): { stop(): void } {
  const beat = async () => {
    if (!(await ping())) return;
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify({ pid: process.pid, at: new Date().toISOString() })}\n`);
    fs.renameSync(tmp, file);
  };
  void beat().catch(() => {});
  const timer = setInterval(() => {
    void beat().catch(() => {});
  }, HEARTBEAT_EVERY_MS);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      fs.rmSync(file, { force: true });
    },
  };
}

/** Starts a worker and keeps it until SIGINT/SIGTERM; `npm run worker` and `circuits worker`. */
export async function runWorkerUntilSignalled(config: Config, log: Logger): Promise<void> {
  const tracing = startTracing(log);
  const starting = startWorkerProcess(config, log);
  // Handled before the worker says it is ready: a signal sent on that line must find a handler, not the default
  // that kills the process at once. One during the start stops the worker once it has started.
  closeOnSignals(
    log,
    'worker',
    async () => {
      await (await starting).close();
      await tracing?.shutdown();
    },
    15_000,
  );
  await starting;
}

async function main(): Promise<void> {
  const config = loadConfigOrExit('circuit-worker', { http: false });
  await runWorkerUntilSignalled(config, createLogger(config.logLevel));
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(`circuit-worker: failed to start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
