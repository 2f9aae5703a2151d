import type { AgendaBackend, Job } from 'agenda' with { 'resolution-mode': 'import' };
import type { Config } from '../config';
import type { Logger } from '../logger';

export const EXECUTE_RUN = 'executeRun';

export interface ExecuteRunData { runUid: string }

/** The run queue: one Agenda job per run, payload the run uid. */
export interface RunQueue {
  readonly backendName: string;
  enqueue(runUid: string): Promise<void>;
  /** Whether this process executes runs. */
  readonly worker: boolean;
  /** Whether the job store answers (for /readyz). */
  ping(): Promise<boolean>;
  /** Stops taking jobs, waits up to `drainMs` for running ones, then disconnects. */
  close(drainMs?: number): Promise<void>;
}

export interface RunQueueOptions {
  config: Config;
  databaseUrl: string;
  log: Logger;
}

/** How often a worker polls besides notifications: often enough to take over expired locks promptly. */
export function processEveryMs(lockLifetimeMs: number): number {
  return Math.min(5_000, Math.max(250, Math.floor(lockLifetimeMs / 4)));
}

async function createBackend({ config, databaseUrl }: RunQueueOptions): Promise<AgendaBackend> {
  if (config.mongodbUrl) {
    const { MongoBackend } = await import('@agendajs/mongo-backend');
    return new MongoBackend({ address: config.mongodbUrl, collection: 'agendaJobs' });
  }
  const { PostgresBackend } = await import('@agendajs/postgres-backend');
  // The table is created by migration 0002 (serialised by the migration lock): processes starting
  // together on one database would otherwise race on the backend's own DDL.
  return new PostgresBackend({
    ensureSchema: false,
    poolConfig: { connectionString: databaseUrl, max: Math.min(20, config.jobConcurrency + 4), application_name: 'circuit-jobs' },
    tableName: 'agenda_jobs',
    channelName: 'agenda_jobs',
  });
}

export type RunJobHandler = (job: Job<ExecuteRunData>) => Promise<void>;

/**
 * Builds the Agenda instance on the configured job store: PostgreSQL (LISTEN/NOTIFY, so a queued run
 * starts in milliseconds) by default, MongoDB when MONGODB_URL is set (polls every processEvery).
 * With `handler` this process is also a worker: jobs are handed to it (at-least-once delivery).
 */
export async function createRunQueue(options: RunQueueOptions, handler?: RunJobHandler): Promise<RunQueue> {
  const { config, log } = options;
  const backend = await createBackend(options);
  const lockLifetime = config.jobLockLifetimeMs;
  const channel = backend.notificationChannel as { publishState?: unknown; subscribeState?: unknown } | undefined;
  if (channel) {
    // Agenda would NOTIFY every listening process three more times per job (start, success,
    // complete) for cross-process job events this service does not use; run states have their own bus.
    channel.publishState = undefined;
    channel.subscribeState = undefined;
  }
  const { Agenda } = await import('agenda');
  const agenda = new Agenda({
    backend,
    name: `circuits-${process.pid}`,
    processEvery: processEveryMs(lockLifetime),
    maxConcurrency: config.jobConcurrency,
    defaultConcurrency: config.jobConcurrency,
    lockLimit: config.jobConcurrency,
    defaultLockLimit: config.jobConcurrency,
    defaultLockLifetime: lockLifetime,
    removeOnComplete: true,
  });
  agenda.on('error', (error: Error) => log.warn({ err: error }, 'job queue error'));
  // The LISTEN client emits 'error' when PostgreSQL goes away (restart, or the embedded server stopping
  // at shutdown); unhandled, that event would crash the process.
  backend.notificationChannel?.on('error', (error: Error) => log.warn({ err: error }, 'job notification channel error'));
  await agenda.ready;
  // Likewise an idle pooled job-store connection (PostgreSQL backend only).
  type PoolLike = { on(event: 'error', listener: (error: Error) => void): unknown };
  (backend.repository as { getPool?: () => PoolLike | undefined }).getPool?.()?.on('error', (error) => log.warn({ err: error }, 'job store connection error'));

  if (handler) {
    agenda.define<ExecuteRunData>(EXECUTE_RUN, handler, {
      concurrency: config.jobConcurrency,
      lockLimit: config.jobConcurrency,
      lockLifetime,
    });
    await agenda.start();
  } else if (backend.notificationChannel) {
    // An enqueue-only process must connect the notification channel itself, or its jobs wait for a poll.
    await backend.notificationChannel.connect();
  }

  return {
    backendName: backend.name,
    worker: handler !== undefined,
    async enqueue(runUid) {
      await agenda.now<ExecuteRunData>(EXECUTE_RUN, { runUid });
    },
    async ping() {
      try {
        await agenda.queryJobs({ name: EXECUTE_RUN, limit: 1 });
        return true;
      } catch {
        return false;
      }
    },
    async close(drainMs = 5_000) {
      if (handler) {
        const result = await agenda.drain({ timeout: drainMs });
        if (result.timedOut) log.warn({ running: result.running }, 'stopped with runs still executing; another worker takes them over');
      } else {
        await backend.notificationChannel?.disconnect();
        await backend.disconnect();
      }
    },
  };
}
