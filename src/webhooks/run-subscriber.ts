import type { RunLifecycleSubscriptions } from '../runs';
import { insertStepDelivery, insertWaitingDelivery, unattemptedDeliveries } from './deliveries';
import type { WebhookEvent } from '../domain/webhook-events';
import type { WebhookDeps } from './ports';
import { queueDelivery } from './queue';

type Deps = Pick<WebhookDeps, 'sequelize' | 'log' | 'queue'>;

function queueEvent(deps: Deps, runUid: string, event: WebhookEvent): void {
  void (async () => {
    for (const uid of await unattemptedDeliveries(deps.sequelize, runUid, event)) await queueDelivery(deps, uid);
  })().catch((error: unknown) =>
    deps.log.warn({ err: error, run: runUid, event }, 'could not queue a webhook delivery; the sweeper will'),
  );
}

/**
 * Webhooks subscribe to what happens to runs: their messages leave as soon as the run's process knows
 * of them. The `start` and `completed` messages already exist (written with the transition, migration
 * 0007); this only makes them leave at once rather than at the next sweep. `step` messages are written
 * here, with the step event's seq, and so are `waiting` messages: when a run begins to wait on an approval or a
 * signal (a time wait sends none), for the person or service that holds its decision or callback URL. Runs known
 * to have no webhook cost nothing. What a listener starts
 * runs on its own: it never slows or fails the run.
 */
export function subscribeWebhooks(lifecycle: RunLifecycleSubscriptions, deps: Deps): void {
  lifecycle.on('started', ({ run }) => {
    if (run.webhook_events === null || (run.webhook_events && !run.webhook_events.includes('start'))) return;
    queueEvent(deps, run.uid, 'start');
  });
  lifecycle.on('ended', ({ run }) => {
    if (run.webhook_events === null || (run.webhook_events && !run.webhook_events.includes('completed'))) return;
    queueEvent(deps, run.uid, 'completed');
  });
  lifecycle.on('waiting', ({ run, step }) => {
    if (run.webhook_events === null || (run.webhook_events && !run.webhook_events.includes('waiting'))) return;
    const on = step.for ?? (step.kind === 'approval' ? 'approval' : undefined);
    if (on !== 'approval' && on !== 'signal') return;
    void insertWaitingDelivery(deps.sequelize, run.uid, step)
      .then((uid) => (uid ? queueDelivery(deps, uid) : undefined))
      .catch((error: unknown) =>
        deps.log.warn({ err: error, run: run.uid }, 'could not record a webhook waiting event'),
      );
  });
  lifecycle.onStep(
    (run) => Boolean(run.webhook_events?.includes('step')),
    ({ run, event }) => {
      void insertStepDelivery(deps.sequelize, run.uid, event)
        .then((uid) => (uid ? queueDelivery(deps, uid) : undefined))
        .catch((error: unknown) =>
          deps.log.warn({ err: error, run: run.uid }, 'could not record a webhook step event'),
        );
    },
  );
}
