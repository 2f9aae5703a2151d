import { Field, Int, ObjectType } from 'type-graphql';
import { PageOf } from '../common/pagination';
import { WEBHOOK_EVENTS_TEXT } from '../../domain/webhook-events';

@ObjectType('WebhookSecret', { description: "The key that signs the caller's webhook deliveries (Standard Webhooks)" })
export class WebhookSecretType {
  @Field(() => String, { description: 'whsec_ followed by the base64 key; verify deliveries with it' }) key!: string;
}

@ObjectType('WebhookAttempt', { description: "One attempt at delivering one of a run's webhook messages" })
export class WebhookAttemptType {
  @Field(() => String, { description: 'The webhook-id header: the same for every attempt at one message' })
  webhookId!: string;
  @Field(() => String, { description: WEBHOOK_EVENTS_TEXT }) event!: string;
  @Field(() => String, { nullable: true, description: 'For step events: <step_id>:<status>' }) step!: string | null;
  @Field(() => Int, { description: '1 for the first attempt at the message' }) attempt!: number;
  @Field(() => Int, { nullable: true, description: "The receiver's HTTP status; null when it did not answer" })
  statusCode!: number | null;
  @Field(() => String, {
    nullable: true,
    description: 'Why the attempt failed without an answer (refused target, timeout, network)',
  })
  error!: string | null;
  @Field(() => Date, { description: 'When the attempt ended' }) deliveredAt!: Date;
}

@ObjectType('WebhookAttemptPage')
export class WebhookAttemptPage extends PageOf(WebhookAttemptType) {}
