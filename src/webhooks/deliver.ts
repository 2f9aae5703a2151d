import { Webhook } from 'standardwebhooks';
import { TERMINAL_STATES } from '../domain/runs';
import type { WebhookDeps } from './ports';
import {
  claimAttempt,
  fixBody,
  stateEventSeq,
  waitingEventSeq,
  stateBeforeEvent,
  nextAttemptAt,
  pendingDelivery,
  postponeDelivery,
  postponeReceiver,
  postponeUser,
  recordAttempt,
  type AttemptOutcome,
  type ClaimedDelivery,
} from './deliveries';
import type { ReceiverGate } from './receivers';
import { webhookId } from './queue';
import { ownerViewOfRun } from './run-payload';
import { webhookSecretOf } from './secret';
import { QueryTypes } from 'sequelize';
import {
  childContext,
  contextOf,
  endSpan,
  ROOT_CONTEXT,
  startSpan,
  tracingEnabled,
  withTraceHeaders,
} from '../telemetry/tracing';
import { sendWebhook, WEBHOOK_TIMEOUT_MS, type SendResult } from './send';

/**
 * How long a claimed attempt holds its message: the timeout plus time to record the result. An
 * attempt cut short by a dead worker is taken up again once it passes (its number is then skipped).
 */
const ATTEMPT_LEASE_MS = WEBHOOK_TIMEOUT_MS + 5_000;
/** Each retry waits this many times longer than the one before. */
const BACKOFF_FACTOR = 3;

/** Wait before the retry that follows attempt `attempt` (1-based): base, 3×base, 9×base, … */
export function retryDelayMs(baseMs: number, attempt: number): number {
  return baseMs * BACKOFF_FACTOR ** (attempt - 1);
}

/**
 * `{"type": "circuit_run.<event>", "timestamp", "seq", "data": <the run as its owner GETs it>}`;
 * `start` shows the run as it was when it started, `step` the run as it was at its step event, which it carries
 * as `data.step`, and so does
 * `waiting` (the wait that began; the run's `waiting_for` has its decision or callback URL while it waits).
 * `seq` is the event's place in the run's log: messages can arrive out of order, and
 * a receiver puts them back in order by it.
 */
async function buildBody(deps: WebhookDeps, delivery: ClaimedDelivery): Promise<string | null> {
  const stepSeq = delivery.event === 'step' ? Number(delivery.step?.seq ?? 0) || null : null;
  // A step message shows the run as of its step event (a "started" message never shows the run COMPLETED).
  const asOf =
    delivery.event === 'step'
      ? stepSeq === null
        ? 'RUNNING'
        : await stateBeforeEvent(deps.sequelize, delivery.run_uid, stepSeq)
      : undefined;
  const run = await ownerViewOfRun(deps, delivery.run_uid, delivery.user_uid, asOf);
  if (!run) return null;
  const seq =
    delivery.event === 'step'
      ? stepSeq
      : delivery.event === 'waiting'
        ? await waitingEventSeq(deps.sequelize, delivery.run_uid, String(delivery.step?.step_id ?? ''))
        : await stateEventSeq(
            deps.sequelize,
            delivery.run_uid,
            delivery.event === 'start' ? ['RUNNING'] : TERMINAL_STATES,
          );
  let data: Record<string, unknown> = run;
  if (delivery.event === 'start') {
    const { ended_at: _e, result_blob: _r, metrics: _m, error: _err, ...rest } = run;
    data = { ...rest, state: 'RUNNING' };
  } else if (delivery.event === 'step' || delivery.event === 'waiting') {
    const { seq: _seq, ...step } = delivery.step ?? {};
    data = { ...run, step };
  }
  return JSON.stringify({
    type: `circuit_run.${delivery.event}`,
    timestamp: new Date(delivery.created_at).toISOString(),
    ...(seq ? { seq } : {}),
    data,
  });
}

/** The trace context stored on the run (only looked up with traces on). */
async function runTraceparent(deps: WebhookDeps, runUid: string): Promise<string | null> {
  const [row] = await deps.sequelize
    .query<{ traceparent: string | null }>('SELECT traceparent FROM circuit_runs WHERE uid = $1', {
      bind: [runUid],
      type: QueryTypes.SELECT,
    })
    .catch(() => []);
  return row?.traceparent ?? null;
}

/**
 * One attempt at a message, if it is due and no other attempt holds it: signs it with the owner's
 * current secret (Standard Webhooks), POSTs it, records the attempt. Returns when to try again
 * (exponential backoff, WEBHOOK_MAX_ATTEMPTS in all), or null when there is nothing more to do.
 */
export async function attemptDelivery(
  deps: WebhookDeps,
  deliveryUid: string,
  gate?: ReceiverGate,
): Promise<Date | null> {
  if (!gate) return attemptNow(deps, deliveryUid);
  const { sequelize } = deps;
  const pending = await pendingDelivery(sequelize, deliveryUid);
  if (!pending) return null;
  if (pending.next_attempt_at.getTime() > Date.now() + 1_000) return pending.next_attempt_at;
  // Fair shares (docs/fairness.md): a busy or silent receiver's messages, and those of a user whose
  // share of the delivery slots is full, wait without an attempt.
  const ticket = gate.admit(pending.url, pending.user_uid);
  if (!ticket.admitted) {
    if (ticket.putOff) {
      const jobsToo = !deps.config.mongodbUrl;
      if (ticket.by === 'user' && ticket.user)
        await postponeUser(sequelize, ticket.user, ticket.putOff.from, ticket.putOff.spreadMs, jobsToo);
      else await postponeReceiver(sequelize, ticket.receiver, ticket.putOff.from, ticket.putOff.spreadMs, jobsToo);
    }
    await postponeDelivery(sequelize, deliveryUid, ticket.retryAt);
    return ticket.retryAt;
  }
  let answered = true;
  try {
    return await attemptNow(deps, deliveryUid, (result) => {
      answered = result.statusCode !== null || Boolean(result.error?.startsWith('refused'));
    });
  } finally {
    ticket.done(answered);
  }
}

async function attemptNow(
  deps: WebhookDeps,
  deliveryUid: string,
  sent?: (result: SendResult) => void,
): Promise<Date | null> {
  const { sequelize, config, log } = deps;
  const delivery = await claimAttempt(sequelize, deliveryUid, ATTEMPT_LEASE_MS);
  // Not due: another attempt holds it (or held it, in a worker that died): come back when that hold ends.
  if (!delivery) return nextAttemptAt(sequelize, deliveryUid);
  const built = delivery.body ?? (await buildBody(deps, delivery));
  if (built === null) {
    await recordAttempt(
      sequelize,
      delivery,
      { statusCode: null, error: 'the run no longer exists' },
      { status: 'failed' },
    );
    deps.metrics.webhookDelivery('failed');
    return null;
  }
  const body = delivery.body ?? (await fixBody(sequelize, delivery.uid, built));
  const id = webhookId(delivery.uid);
  const timestamp = new Date();
  const signature = new Webhook(await webhookSecretOf(sequelize, delivery.user_uid)).sign(id, timestamp, body);
  // Traces on: the attempt is a span in the run's trace, and the receiver gets its traceparent.
  const span = tracingEnabled()
    ? startSpan('circuit.webhook.deliver', contextOf(await runTraceparent(deps, delivery.run_uid)), {
        'circuit.run.uid': delivery.run_uid,
        'circuit.webhook.event': delivery.event,
        'circuit.webhook.attempt': delivery.attempts,
      })
    : undefined;
  const result = await sendWebhook(
    delivery.url,
    withTraceHeaders(
      {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': signature,
      },
      span && childContext(ROOT_CONTEXT, span),
    ),
    body,
    config.httpStepAllowPrivate,
  );
  sent?.(result);
  if (span) {
    if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
    endSpan(
      span,
      result.error ??
        (result.statusCode !== null && result.statusCode >= 300 ? `HTTP ${result.statusCode}` : undefined),
    );
  }

  const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  // A refused target (private address) stays refused: retrying would only knock again.
  const outcome: AttemptOutcome = ok
    ? { status: 'delivered' }
    : delivery.attempts >= config.webhookMaxAttempts || result.error?.startsWith('refused')
      ? { status: 'failed' }
      : { status: 'pending', retryInMs: retryDelayMs(config.webhookRetryBaseMs, delivery.attempts) };
  await recordAttempt(sequelize, delivery, result, outcome);
  deps.metrics.webhookDelivery(outcome.status === 'pending' ? 'retry' : outcome.status);
  if (!ok)
    log.info(
      {
        run: delivery.run_uid,
        event: delivery.event,
        attempt: delivery.attempts,
        statusCode: result.statusCode,
        error: result.error,
        outcome: outcome.status,
      },
      'webhook attempt failed',
    );
  return outcome.status === 'pending' ? new Date(Date.now() + outcome.retryInMs) : null;
}
