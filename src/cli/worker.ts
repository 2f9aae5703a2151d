import type { Command } from 'commander';
import { implementation } from './lazy';
import type * as DatabaseModule from './database';
import type * as LoggerModule from '../logger';
import type * as WorkerModule from '../worker';

/** Set while the worker runs, so the CLI entry point does not exit under it. */
export const workerState = { running: false };

/** Runs a worker-only process (executes runs; no HTTP) until SIGINT/SIGTERM: `node dist/src/worker.js`. */
export async function runWorker(): Promise<void> {
  const { cliConfig } = implementation(() => require('./database') as typeof DatabaseModule);
  const { createLogger } = require('../logger') as typeof LoggerModule;
  const { runWorkerUntilSignalled } = require('../worker') as typeof WorkerModule;
  const config = cliConfig(process.env, { http: false });
  await runWorkerUntilSignalled(config, createLogger(config.logLevel));
  workerState.running = true;
}

export function register(program: Command): void {
  program
    .command('worker')
    .description('run a worker-only process (executes runs; no HTTP) until SIGINT/SIGTERM')
    .action(async () => {
      await runWorker();
    });
}
