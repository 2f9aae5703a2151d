import type { Sequelize } from 'sequelize';
import type { Config } from './config';
import type { Logger } from './logger';
import type { BlobStorage } from './storage';
import type { JsonSchemaService } from './engine/json-schemas';
import type { Sandbox } from './sandbox/sandbox';
import { createRunQueue, enqueueBySql, type RunQueue } from './queue/agenda';
import {
  createRunEventBus,
  createRunWing,
  startWorkerPresence,
  sweepTimings,
  WAKE_DUE_EVERY_MS,
  createWaitUrls,
  type RunEventBus,
  type RunWing,
} from './runs';
import { RunMetricsStore } from './telemetry/run-metrics';
import { runTracer, subscribeRunMetrics } from './run-telemetry';
import { resolveSecret } from './storage/secret';
import type { WebhookDeps } from './webhooks/ports';
import { subscribeWebhooks } from './webhooks/run-subscriber';
import {
  deliverWebhookJob,
  sweepOverdueDeliveries,
  WEBHOOK_DELIVERY_SLOTS,
  webhookSweepTimings,
} from './webhooks/webhook-jobs';
import type { ScheduleDeps } from './schedules/ports';
import {
  fireScheduleJob,
  reconcileSchedules,
  SCHEDULE_FIRE_SLOTS,
  SCHEDULE_RECONCILE_EVERY_MS,
} from './schedules/schedule-jobs';

export interface RuntimeOptions {
  config: Config;
  sequelize: Sequelize;
  log: Logger;
  databaseUrl: string;
  /**
   * Set when this process executes runs, webhook deliveries and schedule fires (config.runWorker for
   * `npm start`; always for `npm run worker`): with the blob storage the engine's blob steps read.
   */
  worker: { blobStorage: BlobStorage } | null;
  schemas: JsonSchemaService;
  sandbox: Sandbox;
}

/** What the composition built below the transports: the run wing, the queue's health, schedules' ports, the run metrics. */
export interface Runtime {
  runs: RunWing;
  /** The queue under the wing (its health for /readyz and the heartbeat file; its backend's name). */
  queue: RunQueue;
  /** Run-state changes across processes (PostgreSQL LISTEN/NOTIFY, or Redis when REDIS_URL is set). */
  bus: RunEventBus;
  /** This thread's run metrics, added to the totals of every process; /metrics reads those (src/telemetry/run-metrics.ts). */
  runMetrics: RunMetricsStore;
  /** What schedule commands need (the API creates, changes and deletes schedules). */
  schedules: ScheduleDeps;
  close(): Promise<void>;
}

interface SweepTask {
  name: string;
  everyMs: number;
  run(): Promise<void>;
  once?: boolean;
}

/**
 * The process's periodic sweeps under one timer: each task runs at start and then every `everyMs`
 * (a `once` task only at start), never overlapping itself; a failure is logged and tried at the next turn.
 */
function startSweeper(tasks: SweepTask[], log: Logger): () => Promise<void> {
  const state = tasks.map((task) => ({
    task,
    nextAt: 0,
    running: undefined as Promise<void> | undefined,
    done: false,
  }));
  const tick = () => {
    const now = Date.now();
    for (const entry of state) {
      if (entry.done || entry.running || entry.nextAt > now) continue;
      entry.nextAt = now + entry.task.everyMs;
      entry.done = entry.task.once === true;
      entry.running = entry.task
        .run()
        .catch((error: unknown) => log.warn({ err: error }, `${entry.task.name} failed`))
        .finally(() => {
          entry.running = undefined;
        });
    }
  };
  const periods = tasks.filter((t) => !t.once).map((t) => t.everyMs);
  const timer = periods.length > 0 ? setInterval(tick, Math.min(...periods)) : undefined;
  timer?.unref();
  // At start too: the runs of a worker that died (this process's previous life, say) go on at once.
  tick();
  return async () => {
    if (timer) clearInterval(timer);
    await Promise.all(state.map((entry) => entry.running));
  };
}

/** `http://HOST:PORT` of the configuration, for a process that is told no PUBLIC_URL. */
function listenedOrigin(config: Pick<Config, 'host' | 'port'>): string {
  return `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
}

/**
 * Composes what lies under the transports, in one pass: the cross-process bus, the queue, the run
 * wing, its subscribers (webhooks, run metrics; traces through the wing's tracer), and, in a worker,
 * the job handlers and the sweeper. `src/app.ts` and `src/worker.ts` call it.
 */
export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config, sequelize, log, databaseUrl, worker, schemas, sandbox } = options;
  const bus = await createRunEventBus({ databaseUrl, redisUrl: config.redisUrl, log });
  let presence: Awaited<ReturnType<typeof startWorkerPresence>> | undefined;
  let queue: RunQueue;
  try {
    if (worker) presence = await startWorkerPresence(databaseUrl, log);
    queue = await createRunQueue({
      config,
      databaseUrl,
      log,
      ...(worker ? { worker: { otherJobSlots: WEBHOOK_DELIVERY_SLOTS + SCHEDULE_FIRE_SLOTS } } : {}),
    });
  } catch (error) {
    await presence?.close();
    await bus.close();
    throw error;
  }

  // What this process records (runs', steps' and webhook attempts' ends) goes to the totals every process adds to.
  const runMetrics = new RunMetricsStore({ sequelize, log });
  const { wing, worker: runWorker } = createRunWing({
    config,
    sequelize,
    log,
    queue,
    bus,
    tracer: runTracer(),
    schemas,
    sandbox,
    // The origin is read at each use: an API process knows its address only once it listens (PORT=0).
    waitUrls: createWaitUrls(resolveSecret(config), () => config.publicUrl ?? listenedOrigin(config)),
    ...(presence && worker
      ? { worker: { identity: presence, engine: { blobStorage: worker.blobStorage, config, stepMetrics: runMetrics } } }
      : {}),
  });
  const webhooks: WebhookDeps = { sequelize, log, config, queue, metrics: runMetrics, runs: wing };
  const schedules: ScheduleDeps = { sequelize, log, queue, schemas, runs: wing };
  subscribeWebhooks(wing.lifecycle, webhooks);
  subscribeRunMetrics(wing.lifecycle, runMetrics);

  let stopSweeper: (() => Promise<void>) | undefined;
  if (runWorker) {
    try {
      await queue.work(runWorker.jobHandler, [deliverWebhookJob(webhooks), fireScheduleJob(schedules)]);
    } catch (error) {
      await runWorker.close();
      await queue.close().catch(() => {});
      await presence?.close();
      await bus.close();
      await runMetrics.close();
      throw error;
    }
    const lock = config.jobLockLifetimeMs;
    const postgresJobs = !config.mongodbUrl;
    stopSweeper = startSweeper(
      [
        { name: 'run sweeper', everyMs: sweepTimings(lock).everyMs, run: () => runWorker.sweep() },
        { name: 'parked-run waker', everyMs: WAKE_DUE_EVERY_MS, run: () => runWorker.wakeDue() },
        {
          name: 'webhook sweeper',
          everyMs: webhookSweepTimings(lock).everyMs,
          run: () => sweepOverdueDeliveries(webhooks),
        },
        // MongoDB: every active schedule's job saved once at start; PostgreSQL: those missing one, every minute.
        {
          name: 'schedule reconciler',
          everyMs: SCHEDULE_RECONCILE_EVERY_MS,
          run: () => reconcileSchedules(schedules, !postgresJobs),
          once: !postgresJobs,
        },
      ],
      log,
    );
  }

  return {
    runs: wing,
    queue,
    bus,
    runMetrics,
    schedules,
    async close() {
      await stopSweeper?.();
      const requeue = (await runWorker?.close()) ?? [];
      await queue.close();
      // After the queue has stopped, or this worker's own queue would take them again.
      if (requeue.length > 0) {
        await enqueueBySql(sequelize, queue.sqlEnqueue, requeue).catch((error: unknown) =>
          log.warn({ err: error, runs: requeue.length }, 'could not queue the given-back runs again; the sweep does'),
        );
      }
      await presence?.close();
      await bus.close();
      await runMetrics.close();
    },
  };
}
