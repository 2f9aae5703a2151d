import type { Command } from 'commander';
import type { Config } from '../config';
import { createLogger, type Logger } from '../logger';
import { cliConfig } from './database';
import { lazyRequire } from './lazy';

interface WorkerModule { startWorkerProcess(config: Config, log: Logger): Promise<unknown> }

/**
 * Runs a worker-only process (jobs, no HTTP) until SIGINT/SIGTERM; it logs JSON lines like the
 * service. The same as `node dist/src/worker.js`.
 */
export async function runWorker(): Promise<void> {
  const config = cliConfig();
  const { startWorkerProcess } = lazyRequire<WorkerModule>('worker', 'the worker');
  workerState.running = true;
  await startWorkerProcess(config, createLogger(config.logLevel));
}

/** Set while the worker runs, so the CLI entry point does not exit under it. */
export const workerState = { running: false };

export function register(program: Command): void {
  program
    .command('worker')
    .description('run a worker-only process (executes runs; no HTTP)')
    .action(async () => { await runWorker(); });
}
