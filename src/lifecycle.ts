import { Config, ConfigError, loadConfig } from './config';
import type { Logger } from './logger';

/** Reads the configuration, or prints one clear line and exits 2 (bad configuration never starts). */
export function loadConfigOrExit(program: string): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`${program}: bad configuration: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
}

/**
 * On the first SIGINT or SIGTERM runs `close` and exits 0; exits 1 when it fails or takes longer than
 * `timeoutMs`, so a stuck dependency never keeps the process alive.
 */
export function closeOnSignals(log: Logger, what: string, close: () => Promise<void>, timeoutMs: number): void {
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, `${what} shutting down`);
    const force = setTimeout(() => {
      log.error(`${what} shutdown took over ${timeoutMs / 1000} s; exiting`);
      process.exit(1);
    }, timeoutMs);
    force.unref();
    try {
      await close();
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, `error during ${what} shutdown`);
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
