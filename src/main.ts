import 'reflect-metadata';
import { ConfigError, loadConfig } from './config';
import { createLogger } from './logger';
import { resolveDatabase } from './db/resolveDatabase';
import { startApp } from './app';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`circuit-service: bad configuration: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const log = createLogger(config.logLevel);
  const database = await resolveDatabase(config, (line) => log.warn({ postgres: line }, 'embedded postgres'));
  const app = await startApp({ config, databaseUrl: database.url, log });
  log.info({ url: app.url, graphql: `${app.url}/graphql`, rest: `${app.url}/api/v1`, database: database.description }, 'circuit service ready');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => { log.error('shutdown took over 10 s; exiting'); process.exit(1); }, 10_000);
    force.unref();
    try {
      await app.close();
      await database.stop();
      clearTimeout(force);
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(`circuit-service: failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
