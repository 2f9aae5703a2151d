import type { JobDefinition, QueueJob } from '../queue/agenda';
import { isUid } from '../ids';
import type { WebhookDeps } from './ports';
import { attemptDelivery } from './deliver';
import { ReceiverGate } from './receivers';
import { claimOverdueDeliveries } from './deliveries';
import { DELIVER_WEBHOOK, queueDelivery, type DeliverWebhookData } from './queue';

/** A worker's webhook delivery slots: attempts (jobs) in flight at once. */
export const WEBHOOK_DELIVERY_SLOTS = 50;

/** The most of a worker's delivery slots one user's attempts may hold (WEBHOOK_USER_SHARE_PERCENT of them, at least 1). */
export function webhookUserConcurrency(sharePercent: number): number {
  return Math.max(1, Math.floor((WEBHOOK_DELIVERY_SLOTS * sharePercent) / 100));
}

/**
 * The `deliverWebhook` job: one attempt per run of the job. A failed attempt moves the same job to
 * its retry time (so a message has one job for its whole life); a finished message removes it.
 */
export function deliverWebhookJob(deps: WebhookDeps): JobDefinition {
  // This worker's view of the receivers (src/webhooks/receivers.ts), made with the first job.
  let gate: ReceiverGate | undefined;
  return {
    name: DELIVER_WEBHOOK,
    concurrency: WEBHOOK_DELIVERY_SLOTS,
    handler: async (job: QueueJob<DeliverWebhookData>) => {
      const uid = job.attrs.data?.deliveryUid;
      if (!isUid(uid)) return void (await job.remove());
      // An attempt may take longer than the job lock (10 s timeout): keep the lock fresh meanwhile.
      const keepAlive = setInterval(
        () => {
          job.touch().catch(() => {});
        },
        Math.max(250, Math.floor(deps.config.jobLockLifetimeMs / 3)),
      );
      try {
        gate ??= new ReceiverGate({
          concurrency: deps.config.webhookHostConcurrency,
          userConcurrency: webhookUserConcurrency(deps.config.webhookUserSharePercent),
          failuresToOpen: deps.config.webhookBreakerFailures,
          openMs: deps.config.webhookBreakerOpenMs,
        });
        const retryAt = await attemptDelivery(deps, uid, gate);
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
 * before queueing them, or whose job was lost. The composition's sweeper calls it every
 * `webhookSweepTimings(…).everyMs`.
 */
export async function sweepOverdueDeliveries(deps: WebhookDeps): Promise<void> {
  const { graceMs } = webhookSweepTimings(deps.config.jobLockLifetimeMs);
  const uids = await claimOverdueDeliveries(deps.sequelize, graceMs);
  for (const uid of uids) await queueDelivery(deps, uid);
  if (uids.length > 0) deps.log.info({ deliveries: uids.length }, 'queued overdue webhook deliveries');
}
