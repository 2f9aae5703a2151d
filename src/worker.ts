import 'reflect-metadata';
import type { Config } from './config';
import { ConfigError, loadConfig } from './config';
import { createLogger, type Logger } from './logger';
import { resolveDatabase } from './db/resolveDatabase';
import { createSequelize } from './db/sequelize';
import { migrate } from './db/migrate';
import { initModels } from './models';
import { createBlobStorage } from './storage';
import { createSearchRateLimiter } from './ratelimit';
import { startRunRuntime } from './jobs/runtime';
import type { Services } from './services';

export interface WorkerProcess {
  services: Services;
  close(): Promise<void>;
}

/**
 * A worker without HTTP: executes queued runs (and sweeps for lost ones) against the service's
 * database. Used by `npm run worker`, `circuits worker` and `node dist/src/worker.js`.
 */
export async function startWorkerProcess(config: Config, log: Logger = createLogger(config.logLevel)): Promise<WorkerProcess> {
  const database = await resolveDatabase(config, (line) => log.warn({ postgres: line }, 'embedded postgres'));
  const sequelize = createSequelize(database.url, Math.min(50, config.jobConcurrency + 5));
  try {
    initModels(sequelize);
    await migrate(sequelize);
    const runs = await startRunRuntime({ config, sequelize, log, databaseUrl: database.url, worker: true });
    const searchRateLimiter = createSearchRateLimiter(config, sequelize, log);
    const services: Services = { config, sequelize, log, searchRateLimiter, blobStorage: createBlobStorage(config), ...runs.services };
    runs.attach(services);
    log.info({ database: database.description, jobStore: runs.services.runQueue.backendName, concurrency: config.jobConcurrency }, 'circuit worker ready');
    let closing: Promise<void> | undefined;
    return {
      services,
      close: () => (closing ??= (async () => {
        await runs.close();
        await searchRateLimiter.close();
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

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`circuit-worker: bad configuration: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const log = createLogger(config.logLevel);
  const worker = await startWorkerProcess(config, log);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'worker shutting down');
    const force = setTimeout(() => { log.error('shutdown took over 15 s; exiting'); process.exit(1); }, 15_000);
    force.unref();
    try {
      await worker.close();
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, 'error during worker shutdown');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(`circuit-worker: failed to start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
