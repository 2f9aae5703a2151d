import { Config, ConfigError, configWarnings, loadConfig, type LoadConfigOptions } from './config';
import type { Logger } from './logger';

/** Reads the configuration, or prints one line per problem and exits 2 (bad configuration never starts). */
export function loadConfigOrExit(program: string, options: LoadConfigOptions = {}): Config {
  try {
    return loadConfig(process.env, options);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.problems.map((line) => `${program}: bad configuration: ${line}`).join('\n'));
      process.exit(2);
    }
    throw error;
  }
}

/** Logs the configuration's warnings (valid settings that will make some runs fail) once at start. */
export function logConfigWarnings(config: Config, log: Logger): void {
  for (const warning of configWarnings(config)) log.warn(warning);
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
    const began = Date.now();
    try {
      await close();
      log.info({ ms: Date.now() - began }, `${what} stopped`);
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, `error during ${what} shutdown`);
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
