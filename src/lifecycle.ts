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

/** How long the forced path waits for `forced` (stopping the embedded PostgreSQL) before exiting anyway. */
const FORCED_STOP_MS = 5_000;

/**
 * On the first SIGINT or SIGTERM runs `close` and exits 0; exits 1 when it fails or takes longer than
 * `timeoutMs` (or on a second signal), so a stuck dependency never keeps the process alive. The
 * forced path still runs `forced` (what must never be left behind: the embedded PostgreSQL).
 */
export function closeOnSignals(
  log: Logger,
  what: string,
  close: () => Promise<void>,
  timeoutMs: number,
  forced?: () => Promise<void>,
): void {
  let stopping = false;
  let forcing = false;
  const forceExit = async (why: string) => {
    if (forcing) return;
    forcing = true;
    log.error(`${what} ${why}; exiting`);
    const bound = new Promise<void>((resolve) => setTimeout(resolve, FORCED_STOP_MS).unref());
    await Promise.race([forced?.().catch(() => {}), bound]);
    process.exit(1);
  };
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return void forceExit(`got ${signal} again while shutting down`);
    stopping = true;
    log.info({ signal }, `${what} shutting down`);
    const force = setTimeout(() => void forceExit(`shutdown took over ${timeoutMs / 1000} s`), timeoutMs);
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
