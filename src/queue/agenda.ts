import type { AgendaBackend, Job, NotificationChannel } from 'agenda' with { 'resolution-mode': 'import' };
import { QueryTypes, type Sequelize } from 'sequelize';
import type { Config } from '../config';
import type { Logger } from '../logger';
import {
  agendaLockRoom,
  dropJobStateEvents,
  fillCompletely,
  jobStorePool,
  lockInBatches,
  publishOnly,
  mongoJobStoreDb,
  prepareJobStoreStatements,
  releaseExpiredQueuedJobs,
  skipRunStateSaves,
  type BatchLockingRepository,
  type PatchableChannel,
  type PatchablePool,
  type PatchableRepository,
  type SavingRepository,
} from './agenda-internals';
import { finishedJobs } from './finished-jobs';
import { outboxSqlEnqueue, startOutboxRelay, type OutboxRelay } from './job-outbox';

export const EXECUTE_RUN = 'executeRun';

/** A job as a handler receives it (the queue's type; only src/queue/ imports Agenda itself). */
export type QueueJob<T = unknown> = Job<T>;

export interface ExecuteRunData {
  runUid: string;
}

/**
 * The pieces of SQL that queue a run inside the statement that inserts it (src/runs/create-run.ts):
 * `jobCte` inserts, for every row of a CTE named `run`, a row into a CTE named `job`; `notifyColumn`
 * is a select-list expression over `job` that wakes whoever takes it from there (delivered on commit).
 * PostgreSQL store: the job row itself, and the NOTIFY Agenda's own channel sends. MongoDB store: an
 * outbox row (src/queue/job-outbox.ts) and the NOTIFY its relay listens to. Either way a run is never
 * accepted without a durable record that its job is due, and no extra round trip is spent.
 */
export interface SqlEnqueue {
  jobCte: string;
  notifyColumn: string;
}

/**
 * Queues runs with plain SQL on the service's database (the pieces of SqlEnqueue), for a process whose
 * Agenda has already stopped: a stopping worker queues the runs it gave back this way. Without
 * `sqlEnqueue` nothing is queued here and the sweep queues them.
 */
export async function enqueueBySql(
  sequelize: Sequelize,
  sqlEnqueue: SqlEnqueue | undefined,
  runUids: readonly string[],
): Promise<void> {
  if (!sqlEnqueue || runUids.length === 0) return;
  await sequelize.query(
    `WITH run AS (SELECT unnest($1::uuid[]) AS uid), job AS (${sqlEnqueue.jobCte}) SELECT ${sqlEnqueue.notifyColumn} FROM job`,
    { bind: [runUids], type: QueryTypes.SELECT },
  );
}

/** The run queue: one Agenda job per run, payload the run uid; and the queue of the other job kinds. */
export interface RunQueue {
  readonly backendName: string;
  enqueue(runUid: string): Promise<void>;
  /** How create-run queues a run in its insert statement (see SqlEnqueue); unset: it calls enqueue(). */
  readonly sqlEnqueue?: SqlEnqueue;
  /** Whether this process executes jobs (set at creation; they start with work()). */
  readonly worker: boolean;
  /** Whether the job store answers (for /readyz). */
  ping(): Promise<boolean>;
  /** Queues a job of another kind (a webhook delivery) to run now. */
  now<T extends object>(name: string, data: T): Promise<void>;
  /** Saves the repeating job of `name` whose `data[uniqueKey]` is `data`'s (a schedule's): one per key, cron in its timezone, first run after now. */
  repeat(
    name: string,
    data: Record<string, string>,
    uniqueKey: string,
    every: { cron: string; timezone: string },
  ): Promise<void>;
  /** Removes the jobs of `name` with this data. */
  cancel(name: string, data: Record<string, string>): Promise<void>;
  /**
   * Of the uids the SQL `candidates` selects (a `uid` column, run on the service's database), at most
   * `limit` that have no job of `name` whose `data->>dataKey` is theirs; null when the job store
   * cannot be asked in SQL (MongoDB).
   */
  withoutJob(name: string, dataKey: string, candidates: string, limit: number): Promise<string[] | null>;
  /**
   * A worker (`worker` at creation) starts taking jobs: runs go to `handler`, the other kinds to theirs,
   * which must fit in the slots reserved at creation (`otherJobSlots`).
   */
  work(handler: RunJobHandler, jobs: JobDefinition[]): Promise<void>;
  /** Stops taking jobs, waits up to `drainMs` for running ones, then disconnects. */
  close(drainMs?: number): Promise<void>;
}

export interface RunQueueOptions {
  config: Config;
  databaseUrl: string;
  log: Logger;
  /** This process executes jobs: its slots are the runs' (JOB_CONCURRENCY) plus `otherJobSlots` for the other kinds. */
  worker?: { otherJobSlots: number };
}

/** How often a worker polls besides notifications: often enough to take over expired locks promptly. */
export function processEveryMs(lockLifetimeMs: number): number {
  return Math.min(5_000, Math.max(250, Math.floor(lockLifetimeMs / 4)));
}

const JOBS_TABLE = 'agenda_jobs';
const JOBS_CHANNEL = 'agenda_jobs';
/** The MongoDB store's wake-ups travel over the service's PostgreSQL (LISTEN/NOTIFY): no replica set needed. */
const MONGO_JOBS_CHANNEL = 'agenda_jobs_mongo';
const MONGO_COLLECTION = 'agendaJobs';

interface JobStore {
  backend: AgendaBackend;
  /** The channel workers hear new jobs on (PostgreSQL's own, or a PostgreSQL channel for MongoDB). */
  channel: NotificationChannel & PatchableChannel;
  /** Set when Agenda must be given the channel explicitly (the backend has none of its own). */
  separateChannel: boolean;
}

async function createJobStore({ config, databaseUrl }: RunQueueOptions): Promise<JobStore> {
  const { PostgresBackend, PostgresNotificationChannel } = await import('@agendajs/postgres-backend');
  if (config.mongodbUrl) {
    const { MongoBackend } = await import('@agendajs/mongo-backend');
    const backend = new MongoBackend({ address: config.mongodbUrl, collection: MONGO_COLLECTION });
    const channel = new PostgresNotificationChannel({ connectionString: databaseUrl, channelName: MONGO_JOBS_CHANNEL });
    return { backend, channel: channel as NotificationChannel & PatchableChannel, separateChannel: true };
  }
  // The table is created by migration 0002 (serialised by the migration lock): processes starting
  // together on one database would otherwise race on the backend's own DDL.
  const backend = new PostgresBackend({
    ensureSchema: false,
    // Job rows only mirror what the run rows say (see src/db/async-commit.ts): a job update rolled back
    // by a crash of PostgreSQL is redone by the run's recovery, so none waits for a WAL flush.
    poolConfig: {
      connectionString: databaseUrl,
      max: Math.min(20, config.jobConcurrency + 4),
      application_name: 'circuit-jobs',
      options: '-c synchronous_commit=off',
    },
    tableName: JOBS_TABLE,
    channelName: JOBS_CHANNEL,
  });
  return {
    backend,
    channel: backend.notificationChannel as NotificationChannel & PatchableChannel,
    separateChannel: false,
  };
}

const sqlLiteral = (value: string) => `'${value.replace(/'/g, "''")}'`;

/**
 * PostgreSQL store: SQL that moves the waiting jobs named `jobName` whose `data->>dataKey` is a row's
 * `uid` of the CTE `cte` to that row's `at` (jobs being executed are left alone). What lets another
 * domain put off many of its jobs in one statement (webhook deliveries to a silent receiver).
 */
export function postponeJobsSql(jobName: string, dataKey: string, cte: string): string {
  return `UPDATE ${JOBS_TABLE} j SET next_run_at = ${cte}.at FROM ${cte}
    WHERE j.name = ${sqlLiteral(jobName)} AND j.locked_at IS NULL AND j.data->>${sqlLiteral(dataKey)} = ${cte}.uid::text`;
}

/** SqlEnqueue for the PostgreSQL store: the columns PostgresJobRepository.saveJob writes for agenda.now(). */
export function postgresSqlEnqueue(agendaName: string): SqlEnqueue {
  return {
    jobCte: `INSERT INTO ${JOBS_TABLE} (name, priority, next_run_at, type, data, disabled, fork, last_modified_by)
      SELECT ${sqlLiteral(EXECUTE_RUN)}, 0, now(), 'normal', jsonb_build_object('runUid', run.uid), false, false, ${sqlLiteral(agendaName)} FROM run
      RETURNING id, name, next_run_at, priority`,
    // The payload PostgresNotificationChannel.serializeNotification produces.
    notifyColumn: `pg_notify(${sqlLiteral(JOBS_CHANNEL)}, json_build_object('jobId', job.id, 'jobName', job.name, 'nextRunAt', job.next_run_at,
      'priority', job.priority, 'timestamp', now(), 'source', ${sqlLiteral(agendaName)})::text)`,
  };
}

/**
 * While PostgreSQL restarts, the job store's connections fail many times a second (the channel retries
 * every 100 ms). One warning line per kind of trouble and outage, no stack: the supervisor and /readyz
 * already say what is going on.
 */
function outageLogger(log: Logger, quietMs = 30_000): (what: string, error: Error) => void {
  const last = new Map<string, number>();
  return (what, error) => {
    const key = `${what}: ${error.message}`;
    const now = Date.now();
    if ((last.get(key) ?? 0) > now - quietMs) return;
    last.set(key, now);
    log.warn({ error: error.message }, what);
  };
}

export type RunJobHandler = (job: Job<ExecuteRunData>) => Promise<void>;

/** A job kind of another domain (webhook deliveries, schedule fires), executed where runs are. */
export interface JobDefinition {
  name: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  handler: (job: Job<any>) => Promise<void>;
  concurrency: number;
}

/**
 * Builds the Agenda instance on the configured job store: PostgreSQL by default, MongoDB when
 * MONGODB_URL is set. Either way a queued run starts in milliseconds: workers hear new jobs over
 * PostgreSQL LISTEN/NOTIFY (the MongoDB store has no channel of its own; a change stream would need
 * a replica set). With `worker` this process is also a worker: once `work()` is called, jobs are handed
 * to it (at-least-once).
 */
export async function createRunQueue(options: RunQueueOptions): Promise<RunQueue> {
  const { config, log, databaseUrl, worker } = options;
  // Other job kinds get slots of their own, so a backlog of runs never delays a delivery or a fire.
  const slots = config.jobConcurrency + (worker?.otherJobSlots ?? 0);
  const { backend, channel, separateChannel } = await createJobStore(options);
  const lockLifetime = config.jobLockLifetimeMs;
  const mongo = Boolean(config.mongodbUrl);
  dropJobStateEvents(channel);
  const { Agenda } = await import('agenda');
  const name = `circuits-${process.pid}`;
  const agenda = new Agenda({
    backend,
    ...(separateChannel ? { notificationChannel: channel } : {}),
    name,
    processEvery: processEveryMs(lockLifetime),
    maxConcurrency: slots,
    defaultConcurrency: config.jobConcurrency,
    lockLimit: slots,
    defaultLockLimit: config.jobConcurrency,
    defaultLockLifetime: lockLifetime,
    // PostgreSQL store: finished run jobs are removed in batches (src/queue/finished-jobs.ts) instead
    // of one round trip per run; MongoDB: by Agenda, one by one.
    removeOnComplete: mongo,
  });
  // Before start(), which subscribes to the channel: run jobs are locked many per statement (PostgreSQL
  // store, workers), set up before fillCompletely wraps the same repository method.
  const runLocks =
    worker && !mongo
      ? lockInBatches(
          backend.repository as unknown as BatchLockingRepository,
          (text, values) =>
            jobStorePool<PatchablePool>(backend.repository)!.query(text, values) as Promise<{ rows: unknown[] }>,
          EXECUTE_RUN,
          () => agendaLockRoom(agenda, EXECUTE_RUN),
        )
      : undefined;
  fillCompletely(channel, backend.repository as unknown as PatchableRepository);
  const trouble = outageLogger(log);
  agenda.on('error', (error: Error) => trouble('job queue error', error));
  // The LISTEN client emits 'error' when PostgreSQL goes away (a restart); unhandled, that would crash the process.
  channel.on('error', (error: Error) => trouble('job notification channel error', error));
  await agenda.ready;
  // Likewise an idle pooled job-store connection (PostgreSQL store only).
  const pool = jobStorePool<PatchablePool & { on(event: 'error', listener: (error: Error) => void): unknown }>(
    backend.repository,
  );
  if (pool) {
    pool.on('error', (error) => trouble('job store connection error', error));
    prepareJobStoreStatements(pool);
  }

  let relay: OutboxRelay | undefined;
  if (mongo) {
    // One job per run however often the outbox relay hands it over (see src/queue/job-outbox.ts).
    await mongoJobStoreDb(backend.repository).collection(MONGO_COLLECTION).createIndex({ name: 1, 'data.runUid': 1 });
    relay = await startOutboxRelay({
      databaseUrl,
      log,
      enqueue: async (runUids) => {
        await Promise.all(
          runUids.map(async (runUid) => {
            await agenda
              .create<ExecuteRunData>(EXECUTE_RUN, { runUid })
              .unique({ 'data.runUid': runUid }, { insertOnly: true })
              .schedule(new Date())
              .save();
          }),
        );
      },
    });
  }

  if (!worker) {
    // An enqueue-only process must connect the notification channel itself, or its jobs wait for a poll;
    // it takes no jobs, so it does not listen to them.
    publishOnly(channel);
    await channel.connect();
  }
  let working = false;
  const work = async (handler: RunJobHandler, jobs: JobDefinition[]) => {
    if (!worker) throw new Error('this queue was not created to work');
    const other = jobs.reduce((sum, job) => sum + job.concurrency, 0);
    if (other > worker.otherJobSlots)
      throw new Error(`the other job kinds need ${other} slots, ${worker.otherJobSlots} were reserved`);
    working = true;
    if (!mongo && pool) {
      // A run job's end is one batched DELETE instead of Agenda's two UPDATEs and a removal (see skipRunStateSaves).
      const finished = finishedJobs({
        query: (text, values) => pool.query(text, values),
        table: JOBS_TABLE,
        jobName: EXECUTE_RUN,
        onError: (error) => trouble('could not remove finished jobs', error),
      });
      skipRunStateSaves(backend.repository as unknown as SavingRepository, EXECUTE_RUN, finished.add);
      // Agenda's drain disconnects the store once the last job has finished: their batch goes first.
      const disconnect = backend.disconnect.bind(backend);
      const flush = finished.flush;
      backend.disconnect = async () => {
        await flush();
        await disconnect();
      };
      // Run jobs finished the way Agenda finishes them (by an earlier version): unlocked and dated, not failed.
      await pool
        .query(
          `DELETE FROM ${JOBS_TABLE} WHERE name = $1 AND next_run_at IS NULL AND locked_at IS NULL AND last_finished_at IS NOT NULL AND failed_at IS NULL`,
          [EXECUTE_RUN],
        )
        .catch((error: Error) => trouble('could not remove completed jobs', error));
    }
    agenda.define<ExecuteRunData>(EXECUTE_RUN, handler, {
      concurrency: config.jobConcurrency,
      lockLimit: config.jobConcurrency,
      lockLifetime,
    });
    for (const job of jobs)
      agenda.define(job.name, job.handler, { concurrency: job.concurrency, lockLimit: job.concurrency, lockLifetime });
    await agenda.start();
    releaseExpiredQueuedJobs(agenda);
  };

  return {
    backendName: backend.name,
    worker: worker !== undefined,
    sqlEnqueue: mongo ? outboxSqlEnqueue() : postgresSqlEnqueue(name),
    async enqueue(runUid) {
      await agenda.now<ExecuteRunData>(EXECUTE_RUN, { runUid });
    },
    async now(jobName, data) {
      await agenda.now(jobName, data);
    },
    async repeat(jobName, data, uniqueKey, every) {
      const job = agenda
        .create(jobName, data)
        .repeatEvery(every.cron, { timezone: every.timezone, skipImmediate: true })
        .unique({ [`data.${uniqueKey}`]: data[uniqueKey] });
      try {
        await job.save();
      } catch (error) {
        // Another process created the job at the same moment (migration 0007's unique index); theirs stands.
        if ((error as { code?: string })?.code !== '23505') throw error;
      }
    },
    async cancel(jobName, data) {
      await agenda.cancel({ name: jobName, data });
    },
    async withoutJob(jobName, dataKey, candidates, limit) {
      if (!pool) return null;
      const { rows } = (await pool.query(
        `SELECT c.uid FROM (${candidates}) c
          WHERE NOT EXISTS (SELECT 1 FROM ${JOBS_TABLE} j WHERE j.name = $1 AND j.data->>$2 = c.uid::text)
          LIMIT $3`,
        [jobName, dataKey, limit],
      )) as { rows: { uid: string }[] };
      return rows.map((row) => row.uid);
    },
    work,
    async ping() {
      try {
        // MongoDB: the server's own ping (mongodb driver), not a query that an index or a lock could slow.
        if (mongo) await mongoJobStoreDb(backend.repository).command({ ping: 1 }, { timeoutMS: 2_000 });
        else await agenda.queryJobs({ name: EXECUTE_RUN, limit: 1 });
        return true;
      } catch {
        return false;
      }
    },
    async close(drainMs = 5_000) {
      await relay?.close();
      if (working) {
        await runLocks
          ?.release()
          .catch((error: Error) => trouble('could not unlock run jobs held for this worker', error));
        const result = await agenda.drain({ timeout: drainMs });
        if (result.timedOut)
          log.warn({ running: result.running }, 'stopped with runs still executing; another worker takes them over');
      } else {
        await channel.disconnect();
        await backend.disconnect();
      }
    },
  };
}
