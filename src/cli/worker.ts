import type { Command } from 'commander';
import type { Config } from '../config';
import { createLogger, type Logger } from '../logger';
import { cliConfig } from './database';
import { lazyRequire } from './lazy';

interface WorkerModule { startWorkerProcess(config: Config, log: Logger): Promise<{ close(): Promise<void> }> }

/** Set while the worker runs, so the CLI entry point does not exit under it. */
export const workerState = { running: false };

/**
 * Runs a worker-only process (executes runs; no HTTP) until SIGINT/SIGTERM, logging JSON lines like
 * the service. The same as `node dist/src/worker.js`.
 */
export async function runWorker(): Promise<void> {
  const config = cliConfig();
  const { startWorkerProcess } = lazyRequire<WorkerModule>('worker', 'the worker');
  const log = createLogger(config.logLevel);
  const worker = await startWorkerProcess(config, log);
  workerState.running = true;
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

export function register(program: Command): void {
  program
    .command('worker')
    .description('run a worker-only process (executes runs; no HTTP) until SIGINT/SIGTERM')
    .action(async () => { await runWorker(); });
}
