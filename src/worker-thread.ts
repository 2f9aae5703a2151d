import './debug-colors';
import 'reflect-metadata';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import path from 'node:path';
import { loadConfig } from './config';
import { createLogger, type Logger } from './logger';
import { startWorkerProcess } from './worker';
import { startTracing } from './telemetry/tracing';
import type { DatabaseLogFields, ResolvedDatabase } from './db/resolve-database';

/**
 * `npm start` runs the API and a run worker in one process: the worker in a thread of its own
 * (worker_threads), so the two share the process but not an event loop, and each has a core of a
 * 2-core machine (measured: one event loop for both was the limit of the default shape, README
 * Performance). The thread is an ordinary worker (src/worker.ts) on the same database.
 */

export interface WorkerThread {
  close(): Promise<void>;
}

interface ThreadData {
  databaseUrl: string;
  /** What the main thread knows of its database (the thread sees only a URL, embedded or not). */
  databaseLogFields: DatabaseLogFields;
}
type ThreadMessage = { ready: true } | { closed: true } | { failed: string };

/** Starts the worker thread (resolves once it is ready) and restarts it if it dies. */
export async function startWorkerThread(
  database: Pick<ResolvedDatabase, 'url' | 'logFields'>,
  log: Logger,
): Promise<WorkerThread> {
  let closing = false;
  let current: Worker;
  const start = () =>
    new Promise<Worker>((resolve, reject) => {
      const thread = new Worker(path.join(__dirname, 'worker-thread.js'), {
        workerData: { databaseUrl: database.url, databaseLogFields: database.logFields } satisfies ThreadData,
      });
      thread.on('message', (message: ThreadMessage) => {
        if ('ready' in message) resolve(thread);
        if ('failed' in message) reject(new Error(message.failed));
      });
      thread.on('error', (error) => log.error({ err: error }, 'the run worker thread failed'));
      thread.on('exit', (code) => {
        reject(new Error(`the run worker thread exited (${code}) before it was ready`));
        if (closing || thread !== current) return;
        log.error({ code }, 'the run worker thread stopped; starting it again');
        setTimeout(() => {
          if (!closing)
            void start().then(
              (next) => {
                current = next;
              },
              (error: unknown) => log.error({ err: error }, 'could not start the run worker thread'),
            );
        }, 1_000).unref();
      });
    });
  current = await start();
  return {
    async close() {
      closing = true;
      const thread = current;
      const closed = new Promise<void>((resolve) => {
        thread.on('message', (message: ThreadMessage) => {
          if ('closed' in message) resolve();
        });
        thread.once('exit', () => resolve());
      });
      thread.postMessage('close');
      await closed;
      await thread.terminate();
    },
  };
}

async function runThread(): Promise<void> {
  const { databaseUrl, databaseLogFields } = workerData as ThreadData;
  const port = parentPort!;
  try {
    const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl }, { http: false });
    // Its lines say which thread wrote them (the API's connections have namesakes here).
    const log = createLogger(config.logLevel).child({ thread: 'run-worker' });
    // The SDK is per thread: this thread exports the spans of the runs it executes.
    const tracing = startTracing(log);
    const worker = await startWorkerProcess(config, log, { databaseLogFields });
    port.on('message', (message: unknown) => {
      if (message !== 'close') return;
      void worker
        .close()
        .then(() => tracing?.shutdown())
        .finally(() => port.postMessage({ closed: true } satisfies ThreadMessage));
    });
    port.postMessage({ ready: true } satisfies ThreadMessage);
  } catch (error) {
    port.postMessage({ failed: error instanceof Error ? error.message : String(error) } satisfies ThreadMessage);
  }
}

if (!isMainThread && (workerData as ThreadData | undefined)?.databaseUrl) void runThread();
