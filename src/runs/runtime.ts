import type { Sequelize } from 'sequelize';
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { Services } from '../services';
import { createRunEventBus, type RunEventBus } from './events/bus';
import { createRunQueue, enqueueBySql, type RunQueue } from '../queue/agenda';
import { abortedError, endRun, executeRunHandler, failedEnding } from './execute';
import { claimOrphanedRuns, claimRunsToRequeue, findOverdueRuns } from './transitions';
import { InflightRuns } from './inflight-runs';
import { createRunService, type RunService } from './run-service';
import { startWorkerPresence } from './worker-presence';
import { pruneRunEvents } from './events/log';
import { deliverWebhookJob, startWebhookSweeper } from '../webhooks/webhook-jobs';
import { sweepStepCache } from './step-cache';
import { fireScheduleJob, startScheduleReconciler } from '../schedules/schedule-jobs';
import { RunMetricsStore } from '../telemetry/run-metrics';

/** The pieces of the runs domain that go into Services. */
export interface RunServices {
  runQueue: RunQueue;
  runEvents: RunEventBus;
  runs: RunService;
  runMetrics: RunMetricsStore;
}

export interface RunRuntime {
  services: RunServices;
  /** Hands the composed Services to the worker (jobs wait for it) and starts the sweeper. */
  attach(services: Services): void;
  close(): Promise<void>;
}

export interface RunRuntimeOptions {
  config: Config;
  sequelize: Sequelize;
  log: Logger;
  databaseUrl: string;
  /** Execute runs in this process (config.runWorker for `npm start`; always for `npm run worker`). */
  worker: boolean;
}

/**
 * How long a stopping worker waits for its runs to end before giving the rest back: not at all. A run
 * is resumable (its journal keeps every finished step), so a stop gives it back at once for another
 * worker (or this one's next start) to go on with; waiting only delayed the stop, by the whole wait
 * whenever a run was in a long step. What a run was doing at the stop (a step in flight) is done again.
 */
export const RUN_DRAIN_MS = 0;

/** How long a PROVISIONED run may wait unqueued, and how long any in-flight run may look stuck, before the sweeper queues it again. */
export function sweepTimings(lockLifetimeMs: number) {
  return { graceMs: Math.max(10_000, lockLifetimeMs), stuckAfterMs: Math.max(5 * 60_000, 5 * lockLifetimeMs), everyMs: Math.max(5_000, lockLifetimeMs) };
}

/**
 * Starts the run queue (Agenda) and the run-event bus; with `worker`, this process also executes runs
 * and sweeps for runs that were never queued or whose jobs were lost.
 */
export async function startRunRuntime(options: RunRuntimeOptions): Promise<RunRuntime> {
  const { config, sequelize, log, databaseUrl, worker } = options;
  const runEvents = await createRunEventBus({ databaseUrl, redisUrl: config.redisUrl, log });
  let attached!: (services: Services) => void;
  const servicesReady = new Promise<Services>((resolve) => { attached = resolve; });
  let runQueue: RunQueue;
  let presence: Awaited<ReturnType<typeof startWorkerPresence>> | undefined;
  let inflight: InflightRuns | undefined;
  try {
    if (worker) presence = await startWorkerPresence(databaseUrl, log);
    const identity = presence;
    const inflightReady = identity
      ? servicesReady.then((services) => (inflight = new InflightRuns({
        services, worker: identity, maxInflight: config.runMaxInflight, heartbeatEveryMs: Math.max(200, Math.floor(config.jobLockLifetimeMs / 4)),
        userMaxConcurrent: config.userMaxConcurrentRuns, userShare: Math.max(1, Math.floor(config.runMaxInflight * config.runUserInflightSharePercent / 100)),
      })))
      : undefined;
    runQueue = await createRunQueue(
      { config, databaseUrl, log },
      inflightReady ? async (job) => executeRunHandler(await servicesReady, await inflightReady)(job) : undefined,
      worker ? [deliverWebhookJob(servicesReady), fireScheduleJob(servicesReady)] : [],
    );
  } catch (error) {
    await presence?.close();
    await runEvents.close();
    throw error;
  }

  let sweeper: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> | undefined;
  const stopBackground: (() => Promise<void>)[] = [];
  const sweep = async () => {
    const { graceMs, stuckAfterMs } = sweepTimings(config.jobLockLifetimeMs);
    try {
      const orphans = await claimOrphanedRuns(sequelize, config.jobLockLifetimeMs);
      for (const uid of orphans) await runQueue.enqueue(uid);
      if (orphans.length > 0) log.warn({ runs: orphans.length }, 'queued runs again whose worker is gone');
      const uids = await claimRunsToRequeue(sequelize, graceMs, stuckAfterMs);
      for (const uid of uids) await runQueue.enqueue(uid);
      if (uids.length > 0) log.warn({ runs: uids.length }, 'queued runs again that were never queued or looked stuck');
      await endOverdueRuns();
      inflight?.wake();
      await pruneRunEvents(sequelize, config.runEventsRetentionDays);
      await sweepStepCache(sequelize);
    } catch (error) {
      log.warn({ err: error }, 'run sweeper failed');
    }
  };
  /** Deadlines hold also when the worker died (DESIGN §7.3): runs past theirs that no live worker will end. */
  const endOverdueRuns = async () => {
    const services = await servicesReady;
    const overdue = await findOverdueRuns(sequelize, config.runDeadlineSeconds, config.jobLockLifetimeMs, Math.max(30_000, 2 * config.jobLockLifetimeMs));
    for (const run of overdue) {
      await endRun(services, failedEnding({ uid: run.uid, attempt: run.attempt }, abortedError('DeadlineExceeded')));
    }
  };

  // What this runtime records (runs', steps' and webhook attempts' ends) goes to the totals every process adds to (src/telemetry/run-metrics.ts).
  const runMetrics = new RunMetricsStore({ sequelize, log });
  return {
    services: { runQueue, runEvents, runs: createRunService(sequelize, runQueue, runEvents.sqlChannel), runMetrics },
    attach(services) {
      attached(services);
      if (!worker) return;
      stopBackground.push(startWebhookSweeper(services), startScheduleReconciler(services));
      const sweepNow = () => { sweeping ??= sweep().finally(() => { sweeping = undefined; }); };
      sweeper = setInterval(sweepNow, sweepTimings(config.jobLockLifetimeMs).everyMs);
      sweeper.unref();
      // At start too: the runs of a worker that died (this process's previous life, say) go on at once.
      sweepNow();
    },
    async close() {
      if (sweeper) clearInterval(sweeper);
      await sweeping;
      await Promise.all(stopBackground.map((stop) => stop()));
      const requeue = (await inflight?.close(RUN_DRAIN_MS)) ?? [];
      await runQueue.close();
      // After the queue has stopped, or this worker's own queue would take them again.
      if (requeue.length > 0) {
        await enqueueBySql(sequelize, runQueue.sqlEnqueue, requeue).catch((error: unknown) =>
          log.warn({ err: error, runs: requeue.length }, 'could not queue the given-back runs again; the sweep does'));
      }
      await presence?.close();
      await runEvents.close();
      await runMetrics.close();
    },
  };
}
