import { Arg, Args, Authorized, Ctx, ID, Query, Resolver } from 'type-graphql';
import { authorize } from '../../policies/authorize';
import { webhookPermits } from '../../policies/webhook.policy';
import { attemptsOfRun } from '../../webhooks/deliveries';
import { webhookId } from '../../webhooks/queue';
import { webhookSecretOf } from '../../webhooks/secret';
import { PageArgs, paged, pageWindow } from '../common/pagination';
import type { AppContext } from '../context';
import { findRunFor } from '../run/run.access';
import { WebhookAttemptPage, WebhookAttemptType, WebhookSecretType } from './webhook.type';

@Resolver()
export class WebhookResolver {
  @Authorized()
  @Query(() => WebhookSecretType, {
    description: "The caller's webhook signing secret (GET /webhooks/default/secret), created on first read",
  })
  async webhookSecret(@Ctx() ctx: AppContext): Promise<WebhookSecretType> {
    return Object.assign(new WebhookSecretType(), {
      key: await webhookSecretOf(ctx.services.sequelize, ctx.viewer!.uid),
    });
  }

  @Query(() => WebhookAttemptPage, {
    description: "Attempts at delivering a run's webhook messages, oldest first; only for the user who started the run",
  })
  async circuitRunWebhookDeliveries(
    @Arg('uid', () => ID) uid: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<WebhookAttemptPage> {
    const run = await findRunFor(ctx, uid, 'read');
    authorize(
      ctx.viewer,
      webhookPermits(ctx.viewer, run, 'readDeliveries'),
      'Only the user who started the run may see its webhook deliveries',
    );
    const window = pageWindow(args);
    const { rows, total } = await attemptsOfRun(ctx.services.sequelize, run.uid, window.limit, window.offset);
    return paged(
      rows.map((row) =>
        Object.assign(new WebhookAttemptType(), {
          webhookId: webhookId(row.webhook_id),
          event: row.event,
          step: row.step_key || null,
          attempt: row.attempt,
          statusCode: row.status_code,
          error: row.error,
          deliveredAt: row.delivered_at,
        }),
      ),
      total,
      window,
    );
  }
}
