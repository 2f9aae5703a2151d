import { WebhookResolver } from './webhook.resolver';

/** Resolvers of the webhook domain. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const webhookResolvers: Function[] = [WebhookResolver];
