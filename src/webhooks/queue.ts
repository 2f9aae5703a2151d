import type { WebhookDeps } from './ports';

export const DELIVER_WEBHOOK = 'deliverWebhook';
export interface DeliverWebhookData {
  deliveryUid: string;
}

/** Queues an attempt at a message now (the `deliverWebhook` job, src/webhooks/webhook-jobs.ts). */
export async function queueDelivery(deps: Pick<WebhookDeps, 'queue'>, deliveryUid: string): Promise<void> {
  await deps.queue.now<DeliverWebhookData>(DELIVER_WEBHOOK, { deliveryUid });
}

/** The `webhook-id` of a message: the same for every attempt at it. */
export function webhookId(deliveryUid: string): string {
  return `msg_${deliveryUid.replace(/-/g, '')}`;
}
