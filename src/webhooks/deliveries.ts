import { QueryTypes, type Sequelize } from 'sequelize';
import { preparedQuery } from '../db/prepared';
import { claimOverdue } from '../db/claim-overdue';
import type { RunState } from '../domain/runs';
import type { WebhookEvent } from '../domain/webhook-events';
import { postponeJobsSql } from '../queue/agenda';
import { DELIVER_WEBHOOK } from './queue';

/**
 * The webhook outbox (migration 0007): one row per message, written with the run's transition
 * (start, completed) or by a run-event listener (step, waiting); each attempt at it is claimed here first, so copies
 * of its job (at-least-once queues, the sweeper) never attempt it twice at once.
 */

export interface ClaimedDelivery {
  uid: string;
  run_uid: string;
  user_uid: string;
  event: WebhookEvent;
  step: Record<string, unknown> | null;
  url: string;
  body: string | null;
  attempts: number;
  created_at: Date;
}

/**
 * Takes the next attempt at a pending message that is due: counts it and holds the message for
 * `leaseMs` (longer than an attempt can take). Null when it is not due, done, or held by another attempt.
 */
export async function claimAttempt(
  sequelize: Sequelize,
  uid: string,
  leaseMs: number,
): Promise<ClaimedDelivery | null> {
  const [row] = await preparedQuery<ClaimedDelivery>(
    sequelize,
    `UPDATE webhook_deliveries d
        SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => $2)
       FROM circuit_runs r
      WHERE d.uid = $1 AND d.status = 'pending' AND d.next_attempt_at <= now() + interval '1 second' AND r.uid = d.run_uid
      RETURNING d.uid, d.run_uid, r.user_uid, d.event, d.step, d.url, d.body, d.attempts, d.created_at`,
    [uid, leaseMs / 1000],
  );
  return row ?? null;
}

/** A pending message's receiver URL, its run's owner and when it is due; null when it is done or gone. */
export async function pendingDelivery(
  sequelize: Sequelize,
  uid: string,
): Promise<{ url: string; user_uid: string | null; next_attempt_at: Date } | null> {
  const [row] = await preparedQuery<{ url: string; user_uid: string | null; next_attempt_at: Date }>(
    sequelize,
    `SELECT d.url, r.user_uid, d.next_attempt_at
       FROM webhook_deliveries d LEFT JOIN circuit_runs r ON r.uid = d.run_uid
      WHERE d.uid = $1 AND d.status = 'pending'`,
    [uid],
  );
  return row ?? null;
}

/**
 * Moves a pending message's due time to `at` without counting an attempt (its receiver is busy or its
 * breaker open): its job comes back then, and the sweeper does not take it for a lost one meanwhile.
 */
export async function postponeDelivery(sequelize: Sequelize, uid: string, at: Date): Promise<void> {
  await preparedQuery(
    sequelize,
    `UPDATE webhook_deliveries SET next_attempt_at = $2 WHERE uid = $1 AND status = 'pending' AND next_attempt_at < $2`,
    [uid, at],
  );
}

/**
 * Puts off every due message to one receiver (`receiver`: scheme://host:port, as ReceiverGate.keyOf
 * names it), each to a time spread over `spreadMs` after `from`, in one statement; with `jobsToo`
 * (the PostgreSQL job store) their waiting jobs move with them, so a silent receiver's backlog is not
 * walked through job by job ahead of other receivers' messages. Returns how many were put off.
 */
export async function postponeReceiver(
  sequelize: Sequelize,
  receiver: string,
  from: Date,
  spreadMs: number,
  jobsToo: boolean,
): Promise<number> {
  const rows = await preparedQuery<{ n: string }>(
    sequelize,
    `WITH due AS (
       UPDATE webhook_deliveries SET next_attempt_at = $2::timestamptz + random() * make_interval(secs => $3)
        WHERE status = 'pending' AND next_attempt_at <= now() + interval '1 second'
          AND lower(substring(url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]+')) = $1
        RETURNING uid, next_attempt_at AS at)${
          jobsToo
            ? `,
     moved AS (${postponeJobsSql(DELIVER_WEBHOOK, 'deliveryUid', 'due')})`
            : ''
        }
     SELECT count(*) AS n FROM due`,
    [receiver, from, spreadMs / 1000],
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Puts off every due message of one user's runs (their share of the worker's delivery slots is full),
 * each to a time spread over `spreadMs` after `from`, in one statement, with their waiting jobs when
 * `jobsToo`, as postponeReceiver does for a receiver: so one user's backlog to many receivers is not
 * walked through job by job ahead of other users' messages. Returns how many were put off.
 */
export async function postponeUser(
  sequelize: Sequelize,
  userUid: string,
  from: Date,
  spreadMs: number,
  jobsToo: boolean,
): Promise<number> {
  const rows = await preparedQuery<{ n: string }>(
    sequelize,
    `WITH due AS (
       UPDATE webhook_deliveries d SET next_attempt_at = $2::timestamptz + random() * make_interval(secs => $3)
         FROM circuit_runs r
        WHERE d.status = 'pending' AND d.next_attempt_at <= now() + interval '1 second'
          AND r.uid = d.run_uid AND r.user_uid = $1
        RETURNING d.uid, d.next_attempt_at AS at)${
          jobsToo
            ? `,
     moved AS (${postponeJobsSql(DELIVER_WEBHOOK, 'deliveryUid', 'due')})`
            : ''
        }
     SELECT count(*) AS n FROM due`,
    [userUid, from, spreadMs / 1000],
  );
  return Number(rows[0]?.n ?? 0);
}

/** When a pending message is next due (e.g. the end of another attempt's hold); null when it is done or gone. */
export async function nextAttemptAt(sequelize: Sequelize, uid: string): Promise<Date | null> {
  const [row] = await preparedQuery<{ next_attempt_at: Date }>(
    sequelize,
    `SELECT next_attempt_at FROM webhook_deliveries WHERE uid = $1 AND status = 'pending'`,
    [uid],
  );
  return row?.next_attempt_at ?? null;
}

/** Fixes the message body on its first attempt; returns the body every attempt sends. */
export async function fixBody(sequelize: Sequelize, uid: string, body: string): Promise<string> {
  const [row] = await preparedQuery<{ body: string }>(
    sequelize,
    `UPDATE webhook_deliveries SET body = COALESCE(body, $2) WHERE uid = $1 RETURNING body`,
    [uid, body],
  );
  return row?.body ?? body;
}

export type AttemptOutcome = { status: 'delivered' | 'failed' } | { status: 'pending'; retryInMs: number };

/** Records an attempt and what follows it, in one statement. */
export async function recordAttempt(
  sequelize: Sequelize,
  delivery: Pick<ClaimedDelivery, 'uid' | 'attempts'>,
  result: { statusCode: number | null; error: string | null },
  outcome: AttemptOutcome,
): Promise<void> {
  await preparedQuery(
    sequelize,
    `WITH attempt AS (
       INSERT INTO webhook_attempts (delivery_uid, attempt, status_code, error) VALUES ($1, $2, $3, $4)
       ON CONFLICT (delivery_uid, attempt) DO NOTHING)
     UPDATE webhook_deliveries
        SET status = $5, next_attempt_at = CASE WHEN $5 = 'pending' THEN now() + make_interval(secs => $6) ELSE next_attempt_at END
      WHERE uid = $1 AND attempts = $2`,
    [
      delivery.uid,
      delivery.attempts,
      result.statusCode,
      result.error,
      outcome.status,
      outcome.status === 'pending' ? outcome.retryInMs / 1000 : 0,
    ],
  );
}

/** The messages of a run's `event` that no attempt has taken yet (to queue them at once). */
export async function unattemptedDeliveries(
  sequelize: Sequelize,
  runUid: string,
  event: WebhookEvent,
): Promise<string[]> {
  const rows = await preparedQuery<{ uid: string }>(
    sequelize,
    `SELECT uid FROM webhook_deliveries WHERE run_uid = $1 AND event = $2 AND status = 'pending' AND attempts = 0`,
    [runUid, event],
  );
  return rows.map((row) => row.uid);
}

/** The seq of the run's state event into one of `states` (a `start` or `completed` message's place in the log). */
export async function stateEventSeq(
  sequelize: Sequelize,
  runUid: string,
  states: readonly RunState[],
): Promise<number | null> {
  const [row] = await preparedQuery<{ seq: number | null }>(
    sequelize,
    `SELECT max(seq) AS seq FROM circuit_run_events WHERE run_uid = $1 AND kind = 'state' AND data->>'state' = ANY($2::text[])`,
    [runUid, states],
  );
  return row?.seq === null || row?.seq === undefined ? null : Number(row.seq);
}

/**
 * The run's state as of event `seq`: the last state event before it (RUNNING when none is logged: steps run
 * only while the run does).
 */
export async function stateBeforeEvent(sequelize: Sequelize, runUid: string, seq: number): Promise<RunState> {
  const [row] = await preparedQuery<{ state: RunState }>(
    sequelize,
    `SELECT data->>'state' AS state FROM circuit_run_events
      WHERE run_uid = $1 AND kind = 'state' AND seq < $2 ORDER BY seq DESC LIMIT 1`,
    [runUid, seq],
  );
  return row?.state ?? 'RUNNING';
}

/** What makes a step event's message one of a kind (`<step_id>:<status>`, with the attempt, turn or tool call that repeat it). */
function stepKey(step: { step_id: string; status: string; attempt?: number; turn?: number; call_id?: string }): string {
  const base = `${step.step_id}:${step.status}`;
  if (step.status === 'retrying') return `${base}:${step.attempt ?? 0}`;
  if (step.status === 'agent_turn') return `${base}:${step.turn ?? 0}`;
  if (step.status === 'tool_call' || step.status === 'tool_result')
    return `${base}:${step.turn ?? 0}:${step.call_id ?? ''}`;
  return base;
}

/** Writes the message for a step event of a run whose webhook wants step events; null when it does not (or it exists). */
export async function insertStepDelivery(
  sequelize: Sequelize,
  runUid: string,
  step: { step_id: string; status: string; attempt?: number; turn?: number; call_id?: string },
): Promise<string | null> {
  const [row] = await preparedQuery<{ uid: string }>(
    sequelize,
    `INSERT INTO webhook_deliveries (run_uid, event, step_key, step, url)
       SELECT uid, 'step', $2, $3::jsonb, webhook_url FROM circuit_runs WHERE uid = $1 AND 'step' = ANY (webhook_events)
     ON CONFLICT DO NOTHING RETURNING uid`,
    // A step retries several times, an agent step takes turns and calls tools: each such event is a message of its own.
    [runUid, stepKey(step), JSON.stringify(step)],
  );
  return row?.uid ?? null;
}

/**
 * Writes the `waiting` message of a run that began to wait on an approval or a signal, if its webhook wants
 * `waiting`; null when it does not (or the message exists: one per step, keyed `<step_id>:waiting`).
 */
export async function insertWaitingDelivery(
  sequelize: Sequelize,
  runUid: string,
  step: { step_id: string },
): Promise<string | null> {
  const [row] = await preparedQuery<{ uid: string }>(
    sequelize,
    `INSERT INTO webhook_deliveries (run_uid, event, step_key, step, url)
       SELECT uid, 'waiting', $2, $3::jsonb, webhook_url FROM circuit_runs
        WHERE uid = $1 AND webhook_url IS NOT NULL AND 'waiting' = ANY (webhook_events)
     ON CONFLICT DO NOTHING RETURNING uid`,
    [runUid, `${step.step_id}:waiting`, JSON.stringify(step)],
  );
  return row?.uid ?? null;
}

/** The seq of the step event in which `stepId` began waiting (a `waiting` message's place in the log); null until it is logged. */
export async function waitingEventSeq(sequelize: Sequelize, runUid: string, stepId: string): Promise<number | null> {
  const [row] = await preparedQuery<{ seq: number | null }>(
    sequelize,
    `SELECT max(seq) AS seq FROM circuit_run_events
      WHERE run_uid = $1 AND kind = 'step' AND data->>'step_id' = $2 AND data->>'status' = 'waiting'`,
    [runUid, stepId],
  );
  return row?.seq === null || row?.seq === undefined ? null : Number(row.seq);
}

/**
 * Pending messages whose next attempt is overdue by `graceMs`: never queued (the process died
 * between the run's transition and queueing) or whose job was lost. Marks them due now, so a
 * sweep takes each once per grace period.
 */
export async function claimOverdueDeliveries(sequelize: Sequelize, graceMs: number, limit = 200): Promise<string[]> {
  return claimOverdue(
    sequelize,
    {
      table: 'webhook_deliveries',
      overdue: `status = 'pending' AND next_attempt_at < now() - make_interval(secs => $1)`,
      orderBy: 'next_attempt_at',
      set: 'next_attempt_at = now()',
    },
    [graceMs / 1000],
    limit,
  );
}

export interface AttemptRow {
  webhook_id: string;
  event: WebhookEvent;
  step_key: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  delivered_at: Date;
}

/** The attempts at a run's messages, oldest first. */
export async function attemptsOfRun(
  sequelize: Sequelize,
  runUid: string,
  limit: number,
  offset: number,
): Promise<{ rows: AttemptRow[]; total: number }> {
  const rows = await sequelize.query<AttemptRow & { total: string }>(
    `SELECT d.uid AS webhook_id, d.event, d.step_key, a.attempt, a.status_code, a.error, a.delivered_at, count(*) OVER () AS total
       FROM webhook_attempts a JOIN webhook_deliveries d ON d.uid = a.delivery_uid
      WHERE d.run_uid = $1
      ORDER BY a.delivered_at, d.uid, a.attempt
      LIMIT $2 OFFSET $3`,
    { bind: [runUid, limit, offset], type: QueryTypes.SELECT },
  );
  if (rows.length === 0 && offset > 0) {
    const [{ n }] = await sequelize.query<{ n: string }>(
      `SELECT count(*) AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.uid = a.delivery_uid WHERE d.run_uid = $1`,
      { bind: [runUid], type: QueryTypes.SELECT },
    );
    return { rows: [], total: Number(n) };
  }
  return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
}
