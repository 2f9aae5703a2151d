import type { Db } from 'mongodb';
import crypto from 'node:crypto';
import { LibraryInternalsChanged, requireMethod } from '../library-patches';
import { claimOverdueSql } from '../db/claim-overdue';

/**
 * Every reach into Agenda's internals (its notification channel, job repositories and processor),
 * written for the versions in WRITTEN_FOR (src/library-patches.ts); each checks the shape it relies on
 * when applied and throws LibraryInternalsChanged instead of silently doing nothing, and
 * test/library-patches.test.ts exercises each one.
 */

// ---------------------------------------------------------------------------------------------
// Agenda: notification channel and job repository

export type JobNotification = { jobName: string; nextRunAt?: Date | null };
type NotificationHandler = (notification: JobNotification) => Promise<void> | void;
export interface PatchableChannel {
  connect(): Promise<void>;
  subscribe(handler: NotificationHandler): () => void;
  publishState?: unknown;
  subscribeState?: unknown;
}
export interface PatchableRepository {
  getNextJobToRun(...args: unknown[]): Promise<unknown>;
}

/**
 * Agenda would NOTIFY every listening process three more times per job (start, success, complete)
 * for cross-process job events this service does not use (run states have their own bus). Agenda
 * skips them when the channel has no publishState/subscribeState (optional in its interface).
 */
export function dropJobStateEvents(channel: PatchableChannel): void {
  requireMethod(channel, 'publishState', 'Agenda notification channel');
  requireMethod(channel, 'subscribeState', 'Agenda notification channel');
  channel.publishState = undefined;
  channel.subscribeState = undefined;
}

/**
 * A process that only enqueues (the API with RUN_WORKER=false) publishes on Agenda's notification
 * channel but takes no jobs, yet connecting the channel also LISTENs: every job's NOTIFY then woke
 * this process and its PostgreSQL backend for nothing (PostgreSQL signals each listening backend of
 * the database on every NOTIFY). After each connect, reconnects included, the channel's connection
 * stops listening; publishing goes through the channel's pool and is unaffected.
 */
export function publishOnly(channel: PatchableChannel): void {
  requireMethod(channel, 'connect', 'Agenda notification channel');
  const connect = channel.connect.bind(channel);
  channel.connect = async () => {
    await connect();
    const listening = (channel as { listenClient?: { query(text: string): Promise<unknown> } }).listenClient;
    if (!listening)
      throw new LibraryInternalsChanged('the Agenda notification channel has no listenClient after connect()');
    await listening.query('UNLISTEN *');
  };
}

/** How soon a fill stopped by the lock limit looks again (in memory only while still at the limit). */
const REFILL_RETRY_MS = 20;

/**
 * Agenda answers a job notification with a queue fill: it locks jobs one by one until a scan finds
 * none or its lock limit is reached. Two gaps under load, both closed here around the notification
 * channel (Agenda's JobProcessor subscribes its handleNotification through channel.subscribe and
 * fills through repository.getNextJobToRun):
 *  - Fills started by a burst of notifications overlap, and each ends with its own empty scan (a
 *    round trip that locks nothing). Coalesced per job name, one fill runs at a time, and
 *    notifications that arrive meanwhile cause exactly one more fill after it: no wake-up is lost.
 *  - A fill stopped by the lock limit is not resumed when jobs finish; the rest of a backlog would
 *    wait for the processEvery poll (seconds). So while the last fill ended without an empty scan,
 *    it is tried again shortly; at the limit such a try costs no database access.
 */
export function fillCompletely(channel: PatchableChannel, repository: PatchableRepository): void {
  requireMethod(channel, 'subscribe', 'Agenda notification channel');
  requireMethod(repository, 'getNextJobToRun', 'Agenda job repository');
  let drained = true;
  const getNextJobToRun = repository.getNextJobToRun.bind(repository);
  repository.getNextJobToRun = async (...args: unknown[]) => {
    const job = await getNextJobToRun(...args);
    drained = job === undefined || job === null;
    return job;
  };
  const subscribe = channel.subscribe.bind(channel);
  channel.subscribe = (handler) => {
    const filling = new Map<string, { again: boolean }>();
    let subscribed = true;
    const fill = async (notification: JobNotification): Promise<void> => {
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
      if (!drained && due && subscribed)
        setTimeout(() => {
          void fill(notification);
        }, REFILL_RETRY_MS).unref();
    };
    const unsubscribe = subscribe(fill);
    return () => {
      subscribed = false;
      unsubscribe();
    };
  };
}

/** The PostgreSQL store's repository as lockInBatches uses it. */
export interface BatchLockingRepository extends PatchableRepository {
  tableName: string;
  sort: { nextRunAt?: string; priority?: string };
  rowToJob(row: Record<string, unknown>): unknown;
}

/** The most jobs one lock statement takes. */
const MAX_LOCK_BATCH = 50;

/**
 * Agenda's queue fill locks one job per round trip (getNextJobToRun), and ends with a scan that finds
 * none. For `jobName` on the PostgreSQL store, one statement locks as many due jobs as the processor
 * has room for (`room()`, less what statements still in flight asked for), and the fill takes them
 * one by one from memory before it scans again (a fill of n queued jobs costs two statements instead
 * of n + 1). A job kept in memory for half its lock lifetime is not handed out but unlocked, as is
 * what is kept when the worker stops (`release()`); either unlock leaves a job alone if its lock is
 * no longer the one taken here.
 */
export function lockInBatches(
  repository: BatchLockingRepository,
  query: (text: string, values: unknown[]) => Promise<{ rows: unknown[] }>,
  jobName: string,
  room: () => number,
): { release(): Promise<void> } {
  requireMethod(repository, 'getNextJobToRun', 'Agenda job repository');
  requireMethod(repository, 'rowToJob', 'Agenda PostgresJobRepository');
  if (typeof repository.tableName !== 'string')
    throw new LibraryInternalsChanged('Agenda PostgresJobRepository.tableName is not a string');
  const { nextRunAt = 'asc', priority = 'desc' } = repository.sort ?? {};
  if (nextRunAt !== 'asc' || priority !== 'desc')
    throw new LibraryInternalsChanged(
      `Agenda PostgresJobRepository.sort is not the default (${nextRunAt}, ${priority})`,
    );
  const table = `"${repository.tableName.replace(/"/g, '""')}"`;
  // Due jobs, and jobs whose lock expired (what Agenda's getNextJobToRun finds), claimed as src/db/claim-overdue.ts claims.
  const lockSql = claimOverdueSql(
    {
      table,
      key: 'id',
      overdue: 'name = $2 AND disabled = FALSE AND ((locked_at IS NULL AND next_run_at <= $3) OR locked_at <= $4)',
      orderBy: 'next_run_at ASC NULLS LAST, priority DESC',
      set: 'locked_at = $1, last_modified_by = $5',
    },
    '$6',
    '*',
  );
  const unlockSql = `UPDATE ${table} t SET locked_at = NULL
     FROM unnest($1::uuid[], $2::timestamptz[]) AS k(id, locked_at)
     WHERE t.id = k.id AND t.locked_at = k.locked_at`;
  type Row = Record<string, unknown> & { id: string; next_run_at: Date | null; priority: number };
  type Kept = { row: Row; lockedAt: Date };
  let kept: Kept[] = [];
  let asked = 0;
  const unlock = async (jobs: Kept[]) => {
    if (jobs.length > 0) await query(unlockSql, [jobs.map((k) => k.row.id), jobs.map((k) => k.lockedAt)]);
  };
  const getNextJobToRun = repository.getNextJobToRun.bind(repository);
  repository.getNextJobToRun = async (...args: unknown[]) => {
    const [name, nextScanAt, lockDeadline, now, options] = args as [
      string,
      Date,
      Date,
      Date | undefined,
      { lastModifiedBy?: string } | undefined,
    ];
    if (name !== jobName) return getNextJobToRun(...args);
    const lifetimeMs = Date.now() - lockDeadline.getTime();
    const stale: Kept[] = [];
    let handed: Kept | undefined;
    while (!handed && kept.length > 0) {
      const next = kept.shift()!;
      if (Date.now() - next.lockedAt.getTime() < lifetimeMs / 2) handed = next;
      else stale.push(next);
    }
    // Unlocked now, not left to expire: the scan below (or any worker's) takes them again.
    await unlock(stale);
    if (handed) return repository.rowToJob(handed.row);
    const lockTime = now ?? new Date();
    const limit = Math.max(1, Math.min(MAX_LOCK_BATCH, room() - asked));
    asked += limit;
    let rows: Row[];
    try {
      rows = (await query(lockSql, [lockTime, name, nextScanAt, lockDeadline, options?.lastModifiedBy ?? null, limit]))
        .rows as Row[];
    } finally {
      asked -= limit;
    }
    // RETURNING does not keep the subquery's order: the fill takes them in Agenda's order.
    rows.sort(
      (a, b) =>
        (a.next_run_at?.getTime() ?? Infinity) - (b.next_run_at?.getTime() ?? Infinity) || b.priority - a.priority,
    );
    // Appended: a fill started by the processEvery poll can overlap one started by a NOTIFY, and what
    // either locked must be handed out, or it would wait for its lock to expire.
    kept.push(...rows.slice(1).map((row) => ({ row, lockedAt: lockTime })));
    return rows.length > 0 ? repository.rowToJob(rows[0]) : undefined;
  };
  return {
    async release() {
      const jobs = kept;
      kept = [];
      await unlock(jobs);
    },
  };
}

/**
 * How many more `jobName` jobs Agenda's processor may lock now: what its shouldLock() checks, as a
 * count (the job's lockLimit and the processor's total lock limit). 1 before the processor exists.
 */
export function agendaLockRoom(agenda: unknown, jobName: string): number {
  type Processor = {
    lockedJobs?: unknown[];
    totalLockLimit?: number;
    jobStatus?: Record<string, { locked?: number } | undefined>;
  };
  const { jobProcessor: processor, definitions } = agenda as {
    jobProcessor?: Processor;
    definitions?: Record<string, { lockLimit?: number } | undefined>;
  };
  if (!processor) return 1;
  if (
    !Array.isArray(processor.lockedJobs) ||
    typeof processor.jobStatus !== 'object' ||
    typeof definitions !== 'object'
  ) {
    throw new LibraryInternalsChanged('Agenda JobProcessor has no lockedJobs/jobStatus, or Agenda no definitions');
  }
  const lockLimit = definitions[jobName]?.lockLimit;
  const byJob = lockLimit ? lockLimit - (processor.jobStatus[jobName]?.locked ?? 0) : Infinity;
  const total = processor.totalLockLimit ? processor.totalLockLimit - processor.lockedJobs.length : Infinity;
  return Math.max(0, Math.min(byJob, total));
}

/** The parts of Agenda's JobProcessor that releaseExpiredQueuedJobs touches. */
interface PatchableProcessor {
  enqueueJob(job: ProcessorJob): void;
  updateStatus(name: string, key: 'locked', delta: number): void;
  lockedJobs: ProcessorJob[];
  runningJobs: ProcessorJob[];
}
interface ProcessorJob {
  attrs: { name: string };
  isExpired(): Promise<boolean>;
}

/**
 * Agenda's processor drops a queued job whose lock expired before it started (JobProcessor.jobProcessing:
 * another worker may have taken it since) but goes on counting it as locked, so each such job holds one
 * of its kind's lock slots (lockLimit) and one of the processor's for the life of the process; once
 * they are all held, the worker locks no more jobs of that kind (agenda/agenda#1413). It happens under
 * load: a fill locks a backlog one round trip at a time and starts none before it ends, so the first
 * job locked can outlive its lock lifetime in the queue. Here such a job also gives its slot back (its
 * row's lock has expired: any fill takes it again). Applied to the processor that start() created,
 * before any fill can have locked a job (a lock needs a round trip to the store).
 */
export function releaseExpiredQueuedJobs(agenda: unknown): void {
  const processor = (agenda as { jobProcessor?: PatchableProcessor }).jobProcessor;
  if (!processor) throw new LibraryInternalsChanged('Agenda has no jobProcessor after start()');
  requireMethod(processor, 'enqueueJob', 'Agenda JobProcessor');
  requireMethod(processor, 'updateStatus', 'Agenda JobProcessor');
  if (!Array.isArray(processor.lockedJobs) || !Array.isArray(processor.runningJobs)) {
    throw new LibraryInternalsChanged('Agenda JobProcessor has no lockedJobs/runningJobs arrays');
  }
  const watched = new WeakSet<ProcessorJob>();
  const enqueueJob = processor.enqueueJob.bind(processor);
  processor.enqueueJob = (job) => {
    if (!watched.has(job)) {
      watched.add(job);
      requireMethod(job, 'isExpired', 'Agenda Job');
      const isExpired = job.isExpired.bind(job);
      job.isExpired = async () => {
        const expired = await isExpired();
        // A running job's expiry is runOrRetry's to clean up; a queued one is about to be dropped.
        if (expired && !processor.runningJobs.includes(job)) {
          const at = processor.lockedJobs.indexOf(job);
          if (at !== -1) {
            processor.lockedJobs.splice(at, 1);
            processor.updateStatus(job.attrs.name, 'locked', -1);
          }
        }
        return expired;
      };
    }
    enqueueJob(job);
  };
}

/** The job attributes Agenda hands to repository.saveJobState (JobParameters, the fields read here). */
export interface SavedJobState {
  _id?: unknown;
  name: string;
  lockedAt?: Date | null;
  nextRunAt?: Date | null;
  lastFinishedAt?: Date | null;
  failedAt?: Date | null;
}
export interface SavingRepository {
  saveJobState(job: SavedJobState, options?: unknown): Promise<void>;
}

/**
 * Agenda writes a job's row twice around its handler (Job.run: lastRunAt when it starts, lastFinishedAt
 * and the unlock when it ends), and a job that succeeded is deleted right after. For `jobName` jobs
 * those two UPDATEs are skipped: the lock taken by the fill already keeps the job from other workers
 * (a lost worker's job is re-delivered when the lock expires, as before), and a success is handed to
 * `finished` (the row's id) to be deleted instead of updated. Failures, retries and touch() (a
 * running job extends its lock) are saved as Agenda saves them. Agenda saves the same attrs object
 * from start to end, so the first locked save of an attrs object is its start.
 */
export function skipRunStateSaves(repository: SavingRepository, jobName: string, finished: (id: string) => void): void {
  requireMethod(repository, 'saveJobState', 'Agenda job repository');
  const saveJobState = repository.saveJobState.bind(repository);
  const started = new WeakSet<SavedJobState>();
  repository.saveJobState = async (job, options) => {
    if (job.name !== jobName || job._id === undefined || job._id === null) return saveJobState(job, options);
    if (job.lockedAt) {
      if (started.has(job)) return saveJobState(job, options);
      started.add(job);
      return;
    }
    if (job.lastFinishedAt && !job.nextRunAt && !job.failedAt) {
      finished(String(job._id as string));
      return;
    }
    return saveJobState(job, options);
  };
}

// ---------------------------------------------------------------------------------------------
// pg: the PostgreSQL job store's pool

export interface PatchablePool {
  query: (...args: unknown[]) => Promise<unknown>;
}

/**
 * The PostgreSQL job store sends each of its statements (lock, save state, remove: several per run)
 * as an unnamed statement, parsed and planned on every call. Its texts with parameters are a small
 * fixed set, so they are sent as named statements here: parsed once per connection, plan cached.
 * Texts without parameters (its NOTIFYs embed the payload) stay unnamed, so nothing accumulates.
 */
export function prepareJobStoreStatements(pool: PatchablePool): void {
  requireMethod(pool, 'query', 'pg Pool');
  const query = pool.query.bind(pool);
  const names = new Map<string, string>();
  pool.query = (text: unknown, values?: unknown, ...rest: unknown[]) => {
    if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0 || rest.length > 0)
      return query(text, values, ...rest);
    let name = names.get(text);
    if (!name) names.set(text, (name = `agenda_${crypto.createHash('sha1').update(text).digest('hex').slice(0, 20)}`));
    return query({ name, text, values });
  };
}

/** The PostgreSQL store's pool (PostgresJobRepository.getPool), undefined for other stores. */
export function jobStorePool<T>(repository: unknown): T | undefined {
  const getPool = (repository as { getPool?: () => T | undefined }).getPool;
  if (getPool === undefined) return undefined;
  if (typeof getPool !== 'function')
    throw new LibraryInternalsChanged('Agenda PostgresJobRepository.getPool is not a function');
  const pool = getPool.call(repository);
  if (pool) requireMethod(pool, 'query', 'pg Pool');
  return pool;
}

// ---------------------------------------------------------------------------------------------
// Agenda's MongoDB store: its database handle (for the run-uid index the outbox relay relies on)

/** MongoJobRepository.getDb (public, documented "for use by job logger"): the connected Db. */
export function mongoJobStoreDb(repository: unknown): Db {
  requireMethod(repository, 'getDb', 'Agenda MongoJobRepository');
  const db = (repository as { getDb(): Db }).getDb();
  requireMethod(db, 'command', 'MongoDB Db');
  requireMethod(db, 'collection', 'MongoDB Db');
  return db;
}
