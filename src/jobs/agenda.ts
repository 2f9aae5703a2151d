import crypto from 'node:crypto';
import type { AgendaBackend, Job } from 'agenda' with { 'resolution-mode': 'import' };
import type { Config } from '../config';
import type { Logger } from '../logger';

export const EXECUTE_RUN = 'executeRun';

export interface ExecuteRunData { runUid: string }

/**
 * With the PostgreSQL job store, the pieces of SQL that queue a run inside the statement that inserts
 * it (src/commands/create-run.ts): `jobCte` inserts, for every row of a CTE named `run`, the same job
 * row `agenda.now()` would; `notifyColumn` is a select-list expression over `job` that wakes the workers
 * exactly like Agenda's own NOTIFY (delivered on commit). Saves two round trips per run, and a run is
 * never left inserted but unqueued.
 */
export interface SqlEnqueue {
  jobCte: string;
  notifyColumn: string;
}

/** The run queue: one Agenda job per run, payload the run uid. */
export interface RunQueue {
  readonly backendName: string;
  enqueue(runUid: string): Promise<void>;
  /** Set for the PostgreSQL job store only (see SqlEnqueue). */
  readonly sqlEnqueue?: SqlEnqueue;
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
    tableName: JOBS_TABLE,
    channelName: JOBS_CHANNEL,
  });
}

const JOBS_TABLE = 'agenda_jobs';
/** How often a worker removes completed jobs from the PostgreSQL store. */
const COMPLETED_JOBS_REMOVAL_MS = 2_000;
const JOBS_CHANNEL = 'agenda_jobs';

const sqlLiteral = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** SqlEnqueue for the PostgreSQL store: the columns PostgresJobRepository.saveJob writes for agenda.now(). */
function postgresSqlEnqueue(agendaName: string): SqlEnqueue {
  return {
    jobCte: `INSERT INTO ${JOBS_TABLE} (name, priority, next_run_at, type, data, disabled, fork, last_modified_by)
      SELECT ${sqlLiteral(EXECUTE_RUN)}, 0, now(), 'normal', jsonb_build_object('runUid', run.uid), false, false, ${sqlLiteral(agendaName)} FROM run
      RETURNING id, name, next_run_at, priority`,
    // The payload PostgresNotificationChannel.serializeNotification produces.
    notifyColumn: `pg_notify(${sqlLiteral(JOBS_CHANNEL)}, json_build_object('jobId', job.id, 'jobName', job.name, 'nextRunAt', job.next_run_at,
      'priority', job.priority, 'timestamp', now(), 'source', ${sqlLiteral(agendaName)})::text)`,
  };
}


type Notification = { jobName: string; nextRunAt?: Date | null };
type NotificationHandler = (notification: Notification) => Promise<void> | void;
type NotificationSubscribe = (handler: NotificationHandler) => () => void;
type JobRepository = { getNextJobToRun(...args: unknown[]): Promise<unknown> };

/** How soon a fill stopped by the lock limit looks again (in memory only while still at the limit). */
const REFILL_RETRY_MS = 20;

/**
 * Agenda answers a job NOTIFY with a queue fill: it locks jobs one by one until a scan finds none or
 * its lock limit is reached. Two gaps under load, both closed here around the notification channel:
 *  - Fills started by a burst of notifications overlap, and each ends with its own empty scan (an
 *    UPDATE round trip that locks nothing). Coalesced per job name, one fill runs at a time, and
 *    notifications that arrive meanwhile cause exactly one more fill after it: no wake-up is lost.
 *  - A fill stopped by the lock limit is not resumed when jobs finish; the rest of a backlog would
 *    wait for the processEvery poll (seconds), 50 jobs per poll. So while the last fill ended without
 *    an empty scan, it is tried again shortly; at the limit such a try costs no database access.
 */
function fillCompletely(channel: { subscribe: NotificationSubscribe }, repository: JobRepository): void {
  let drained = true;
  const getNextJobToRun = repository.getNextJobToRun.bind(repository);
  repository.getNextJobToRun = async (...args: unknown[]) => {
    const job = await getNextJobToRun(...args);
    drained = job === undefined;
    return job;
  };
  const subscribe = channel.subscribe.bind(channel);
  channel.subscribe = (handler) => {
    const filling = new Map<string, { again: boolean }>();
    let subscribed = true;
    const fill = async (notification: Notification): Promise<void> => {
      const current = filling.get(notification.jobName);
      if (current) {
        current.again = true;
        return;
      }
      const state = { again: false };
      filling.set(notification.jobName, state);
      try {
        do {
          state.again = false;
          drained = false;
          await handler(notification);
        } while (state.again);
      } finally {
        filling.delete(notification.jobName);
      }
      const due = !notification.nextRunAt || notification.nextRunAt.getTime() <= Date.now();
      if (!drained && due && subscribed) setTimeout(() => { void fill(notification); }, REFILL_RETRY_MS).unref();
    };
    const unsubscribe = subscribe(fill);
    return () => {
      subscribed = false;
      unsubscribe();
    };
  };
}

/**
 * The PostgreSQL job store sends each of its statements (lock, save state, remove: several per run)
 * as an unnamed statement, parsed and planned on every call. Its texts with parameters are a small
 * fixed set, so they are sent as named statements here: parsed once per connection, plan cached.
 * Texts without parameters (its NOTIFYs embed the payload) stay unnamed, so nothing accumulates.
 */
function preparePooledStatements(pool: { query: (...args: unknown[]) => Promise<unknown> }): void {
  const query = pool.query.bind(pool);
  const names = new Map<string, string>();
  pool.query = (text: unknown, values?: unknown, ...rest: unknown[]) => {
    if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0 || rest.length > 0) return query(text, values, ...rest);
    let name = names.get(text);
    if (!name) names.set(text, (name = `agenda_${crypto.createHash('sha1').update(text).digest('hex').slice(0, 20)}`));
    return query({ name, text, values });
  };
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
  const channel = backend.notificationChannel as { publishState?: unknown; subscribeState?: unknown; subscribe: NotificationSubscribe } | undefined;
  if (channel) {
    // Agenda would NOTIFY every listening process three more times per job (start, success,
    // complete) for cross-process job events this service does not use; run states have their own bus.
    channel.publishState = undefined;
    channel.subscribeState = undefined;
    fillCompletely(channel, backend.repository as unknown as JobRepository);
  }
  const { Agenda } = await import('agenda');
  const name = `circuits-${process.pid}`;
  const removeInBatches = !config.mongodbUrl;
  const agenda = new Agenda({
    backend,
    name,
    processEvery: processEveryMs(lockLifetime),
    maxConcurrency: config.jobConcurrency,
    defaultConcurrency: config.jobConcurrency,
    lockLimit: config.jobConcurrency,
    defaultLockLimit: config.jobConcurrency,
    defaultLockLifetime: lockLifetime,
    // PostgreSQL store: completed jobs are removed in batches below (one DELETE every few seconds
    // instead of one round trip per run); MongoDB: by Agenda, one by one.
    removeOnComplete: !removeInBatches,
  });
  agenda.on('error', (error: Error) => log.warn({ err: error }, 'job queue error'));
  // The LISTEN client emits 'error' when PostgreSQL goes away (restart, or the embedded server stopping
  // at shutdown); unhandled, that event would crash the process.
  backend.notificationChannel?.on('error', (error: Error) => log.warn({ err: error }, 'job notification channel error'));
  await agenda.ready;
  // Likewise an idle pooled job-store connection (PostgreSQL backend only).
  type PoolLike = { on(event: 'error', listener: (error: Error) => void): unknown; query: (...args: unknown[]) => Promise<unknown> };
  const pool = (backend.repository as { getPool?: () => PoolLike | undefined }).getPool?.();
  pool?.on('error', (error) => log.warn({ err: error }, 'job store connection error'));
  if (pool) preparePooledStatements(pool);

  let remover: NodeJS.Timeout | undefined;
  if (handler) {
    agenda.define<ExecuteRunData>(EXECUTE_RUN, handler, {
      concurrency: config.jobConcurrency,
      lockLimit: config.jobConcurrency,
      lockLifetime,
    });
    await agenda.start();
    if (removeInBatches && pool) {
      // Jobs that finished without failing (Agenda's removeOnComplete rule); failed ones stay for inspection.
      remover = setInterval(() => {
        pool.query(
          `DELETE FROM ${JOBS_TABLE} WHERE name = $1 AND next_run_at IS NULL AND locked_at IS NULL AND last_finished_at IS NOT NULL AND failed_at IS NULL`,
          [EXECUTE_RUN],
        ).catch((error: unknown) => log.warn({ err: error }, 'could not remove completed jobs'));
      }, COMPLETED_JOBS_REMOVAL_MS);
      remover.unref();
    }
  } else if (backend.notificationChannel) {
    // An enqueue-only process must connect the notification channel itself, or its jobs wait for a poll.
    await backend.notificationChannel.connect();
  }

  return {
    backendName: backend.name,
    worker: handler !== undefined,
    // Only when workers hear the NOTIFY (otherwise agenda.now() and its poll are the path).
    sqlEnqueue: config.mongodbUrl || !backend.notificationChannel ? undefined : postgresSqlEnqueue(name),
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
      if (remover) clearInterval(remover);
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
