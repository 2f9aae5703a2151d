import type { Command } from 'commander';
import type * as Worker from '../worker';
import { createLogger } from '../logger';
import { cliConfig } from './database';

/** Set while the worker runs, so the CLI entry point does not exit under it. */
export const workerState = { running: false };

/** Runs a worker-only process (executes runs; no HTTP) until SIGINT/SIGTERM: `node dist/src/worker.js`. */
export async function runWorker(): Promise<void> {
  const config = cliConfig(process.env, { http: false });
  // Loaded here, not at start: the job queue is needed by this command only.
  const { runWorkerUntilSignalled } = require('../worker') as typeof Worker;
  await runWorkerUntilSignalled(config, createLogger(config.logLevel));
  workerState.running = true;
}

export function register(program: Command): void {
  program
    .command('worker')
    .description('run a worker-only process (executes runs; no HTTP) until SIGINT/SIGTERM')
    .action(async () => { await runWorker(); });
}
