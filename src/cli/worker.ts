import type { Command } from 'commander';
import type { CliIo } from './io';
import { implementation } from './lazy';
import type * as DatabaseModule from './database';
import type * as LoggerModule from '../logger';
import type * as WorkerModule from '../worker';

/** Runs a worker-only process (executes runs; no HTTP) until SIGINT/SIGTERM: `node dist/src/worker.js`. */
export async function runWorker(io: CliIo): Promise<void> {
  const { cliConfig } = implementation(() => require('./database') as typeof DatabaseModule);
  const { createLogger } = require('../logger') as typeof LoggerModule;
  const { runWorkerUntilSignalled } = require('../worker') as typeof WorkerModule;
  const config = cliConfig(io.env, { http: false });
  await runWorkerUntilSignalled(config, createLogger(config.logLevel));
}

/** `started` is told once the worker runs: the process then stays up on the worker's own handles. */
export function register(program: Command, io: CliIo, started: () => void): void {
  program
    .command('worker')
    .description('run a worker-only process (executes runs; no HTTP) until SIGINT/SIGTERM')
    .action(async () => {
      await runWorker(io);
      started();
    });
}
