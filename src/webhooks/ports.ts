import type { Sequelize } from 'sequelize';
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { RunQueue } from '../queue/agenda';
import type { RunWing } from '../runs';
import type { RunMetricsStore } from '../telemetry/run-metrics';

/** The settings webhooks read. */
export type WebhookConfig = Pick<
  Config,
  | 'httpStepAllowPrivate'
  | 'jobLockLifetimeMs'
  | 'mongodbUrl'
  | 'webhookBreakerFailures'
  | 'webhookBreakerOpenMs'
  | 'webhookHostConcurrency'
  | 'webhookMaxAttempts'
  | 'webhookRetryBaseMs'
  | 'webhookUserSharePercent'
>;

/** What webhooks receive from the composition (src/runtime.ts). */
export interface WebhookDeps {
  sequelize: Sequelize;
  log: Logger;
  config: WebhookConfig;
  /** Queues a delivery's attempt now (the `deliverWebhook` job). */
  queue: Pick<RunQueue, 'now'>;
  /** Where an attempt's outcome is counted. */
  metrics: Pick<RunMetricsStore, 'webhookDelivery'>;
  /** The steps a running run waits on and their callback or decision URLs, for its payload. */
  runs: Pick<RunWing, 'waitingSteps' | 'waitUrl'>;
}
