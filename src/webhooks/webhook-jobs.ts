import type { JobDefinition, QueueJob } from '../queue/agenda';
import { isUid } from '../ids';
import type { Services } from '../services';
import { attemptDelivery } from './deliver';
import { ReceiverGate } from './receivers';
import { claimOverdueDeliveries } from './deliveries';
import { DELIVER_WEBHOOK, queueDelivery, type DeliverWebhookData } from './queue';

/** A worker's webhook delivery slots: attempts (jobs) in flight at once. */
export const WEBHOOK_DELIVERY_SLOTS = 50;

/** The most of a worker's delivery slots one user's attempts may hold (WEBHOOK_USER_SHARE_PERCENT of them, at least 1). */
export function webhookUserConcurrency(sharePercent: number): number {
  return Math.max(1, Math.floor(WEBHOOK_DELIVERY_SLOTS * sharePercent / 100));
}

/**
 * The `deliverWebhook` job: one attempt per run of the job. A failed attempt moves the same job to
 * its retry time (so a message has one job for its whole life); a finished message removes it.
 */
export function deliverWebhookJob(services: Promise<Services>): JobDefinition {
  // This worker's view of the receivers (src/webhooks/receivers.ts), made with the first job.
  let gate: ReceiverGate | undefined;
  return {
    name: DELIVER_WEBHOOK,
    concurrency: WEBHOOK_DELIVERY_SLOTS,
    handler: async (job: QueueJob<DeliverWebhookData>) => {
      const ready = await services;
      const uid = job.attrs.data?.deliveryUid;
      if (!isUid(uid)) return void (await job.remove());
      // An attempt may take longer than the job lock (10 s timeout): keep the lock fresh meanwhile.
      const keepAlive = setInterval(() => { job.touch().catch(() => {}); }, Math.max(250, Math.floor(ready.config.jobLockLifetimeMs / 3)));
      try {
        gate ??= new ReceiverGate({
          concurrency: ready.config.webhookHostConcurrency,
          userConcurrency: webhookUserConcurrency(ready.config.webhookUserSharePercent),
          failuresToOpen: ready.config.webhookBreakerFailures, openMs: ready.config.webhookBreakerOpenMs,
        });
        const retryAt = await attemptDelivery(ready, uid, gate);
        // Agenda saves nextRunAt when the handler returns; a removed job is simply not saved.
        if (retryAt) job.attrs.nextRunAt = retryAt;
        else await job.remove();
      } finally {
        clearInterval(keepAlive);
      }
    },
  };
}

/** How often a worker looks for overdue messages, and how overdue one must be. */
export function webhookSweepTimings(lockLifetimeMs: number) {
  return { everyMs: Math.min(5_000, lockLifetimeMs), graceMs: Math.min(30_000, 2 * lockLifetimeMs) };
}

/**
 * Queues messages whose attempt is overdue: written by a run's transition in a worker that died
 * before queueing them, or whose job was lost. Returns a stop function.
 */
export function startWebhookSweeper(services: Services): () => Promise<void> {
  const { everyMs, graceMs } = webhookSweepTimings(services.config.jobLockLifetimeMs);
  let sweeping: Promise<void> | undefined;
  const sweep = async () => {
    try {
      const uids = await claimOverdueDeliveries(services.sequelize, graceMs);
      for (const uid of uids) await queueDelivery(services, uid);
      if (uids.length > 0) services.log.info({ deliveries: uids.length }, 'queued overdue webhook deliveries');
    } catch (error) {
      services.log.warn({ err: error }, 'webhook sweeper failed');
    }
  };
  const timer = setInterval(() => { sweeping ??= sweep().finally(() => { sweeping = undefined; }); }, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await sweeping;
  };
}
