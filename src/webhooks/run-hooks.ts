import type { RunLifecycleHook } from '../runs/lifecycle-hook';
import type { Services } from '../services';
import { insertStepDelivery, unattemptedDeliveries } from './deliveries';
import type { WebhookEvent } from '../domain/webhook-events';
import { queueDelivery } from './queue';

function queueEvent(services: Services, runUid: string, event: WebhookEvent): void {
  void (async () => {
    for (const uid of await unattemptedDeliveries(services.sequelize, runUid, event)) await queueDelivery(services, uid);
  })().catch((error: unknown) => services.log.warn({ err: error, run: runUid, event }, 'could not queue a webhook delivery; the sweeper will'));
}

/**
 * Queues a run's messages as soon as its job knows of them. The `start` and `completed` messages
 * already exist (written with the transition, migration 0007); this only makes them leave at once
 * rather than at the next sweep. Runs the job knows to have no webhook cost nothing.
 */
export const webhookRunHooks: RunLifecycleHook = {
  onStarted(services, run) {
    if (run.webhook_events === null || (run.webhook_events && !run.webhook_events.includes('start'))) return;
    queueEvent(services, run.uid, 'start');
  },
  onEnded(services, run) {
    if (run.webhook_events === null || (run.webhook_events && !run.webhook_events.includes('completed'))) return;
    queueEvent(services, run.uid, 'completed');
  },
  onStep(services, run, event) {
    if (!run.webhook_events?.includes('step')) return;
    void insertStepDelivery(services.sequelize, run.uid, event)
      .then((uid) => (uid ? queueDelivery(services, uid) : undefined))
      .catch((error: unknown) => services.log.warn({ err: error, run: run.uid }, 'could not record a webhook step event'));
  },
};
