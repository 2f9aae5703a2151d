import type { Command } from 'commander';
import type { Config } from '../config';
import { createLogger, type Logger } from '../logger';
import { cliConfig } from './database';
import { lazyRequire } from './lazy';

interface WorkerModule { runWorkerUntilSignalled(config: Config, log: Logger): Promise<void> }

/** Set while the worker runs, so the CLI entry point does not exit under it. */
export const workerState = { running: false };

/** Runs a worker-only process (executes runs; no HTTP) until SIGINT/SIGTERM: `node dist/src/worker.js`. */
export async function runWorker(): Promise<void> {
  const config = cliConfig();
  const { runWorkerUntilSignalled } = lazyRequire<WorkerModule>('worker', 'the worker');
  await runWorkerUntilSignalled(config, createLogger(config.logLevel));
  workerState.running = true;
}

export function register(program: Command): void {
  program
    .command('worker')
    .description('run a worker-only process (executes runs; no HTTP) until SIGINT/SIGTERM')
    .action(async () => { await runWorker(); });
}
