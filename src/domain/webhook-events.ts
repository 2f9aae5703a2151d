/**
 * THE list of what a run's webhook may be told about (`completed`: any terminal state). The query and
 * batch validation (src/runs/run-webhook.ts), the REST enum (rest-bridge/routes/runs.ts, batches.ts), the GraphQL descriptions
 * follow from it; the CHECK on webhook_deliveries.event is held equal to it by test/webhooks.events.test.ts
 * (a new event needs a migration replacing that CHECK). Here, below both the run wing and src/webhooks/.
 */
export const WEBHOOK_EVENTS = ['start', 'step', 'waiting', 'completed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const DEFAULT_WEBHOOK_EVENTS: WebhookEvent[] = ['completed'];
/** "start, step, waiting or completed", for descriptions. */
export const WEBHOOK_EVENTS_TEXT = `${WEBHOOK_EVENTS.slice(0, -1).join(', ')} or ${WEBHOOK_EVENTS[WEBHOOK_EVENTS.length - 1]}`;
