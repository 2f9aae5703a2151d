import crypto from 'node:crypto';
import type { Transaction } from 'sequelize';
import { CircuitRun } from '../models/CircuitRun';
import { RUN_BASE_CREDITS } from '../credits/holds';
import { preparedQuery } from '../db/prepared';
import type { Sequelize } from 'sequelize';
import type { RunQueue } from '../queue/agenda';
import { StatementBatcher } from '../db/statement-batcher';

/** What a new run is made of, as create-run resolved it. */
export type RunFields = Pick<CircuitRun, 'user_uid' | 'circuit_uid' | 'circuit_version_uid' | 'input' | 'is_public' | 'webhook_url' | 'webhook_events'> & { deadline_s: number; alias?: string | null; replay_of?: string | null; replay_mode?: string | null; cache_bypass?: boolean; traceparent?: string | null;
  tags?: string[] | null; metadata?: Record<string, string> | null; max_credits?: number | null;
  spend_token_uid?: string | null; spend_day?: string | null };

/** A run admitted: inserted PROVISIONED with its base credit held; `queued` false means the caller enqueues through Agenda. */
export interface AdmittedRun { run: CircuitRun; queued: boolean }

/** The most of one user's queries admitted by one statement, and the most input bytes it carries. */
const MAX_BATCH = 100;
const MAX_BATCH_BYTES = 4 * 1024 * 1024;

/**
 * Holds the base credit of each run and inserts them PROVISIONED in one statement, so a caller's
 * concurrent queries can never start more runs than the balance covers: the user row is locked first
 * and the runs admitted in order while what is not held covers them. With the PostgreSQL job store
 * each run's job is queued in the same statement too (see SqlEnqueue). Runs of one user only.
 */
/** What admitting runs uses: the database and how the queue takes a run in the insert statement. */
export interface AdmissionPorts { sequelize: Sequelize; runQueue: Pick<RunQueue, 'sqlEnqueue'> }

/**
 * The CTEs every admission shares, after a `wanted` CTE of runs numbered by `ord` (from 1): `locked`, the
 * user row (`userParam`) locked; `admitted`, the wanted runs the unheld balance covers at `creditsParam`
 * each, in order; `hold`, those credits held on the user row (its uid, no row when none was admitted).
 */
function holdCtes(userParam: string, creditsParam: string): string {
  return `locked AS (
       SELECT uid, credits - credits_held AS unheld FROM users WHERE uid = ${userParam} FOR NO KEY UPDATE),
     admitted AS (
       SELECT wanted.* FROM wanted, locked WHERE wanted.ord * ${creditsParam}::bigint <= locked.unheld),
     hold AS (
       UPDATE users SET credits_held = credits_held + ${creditsParam}::bigint * (SELECT count(*) FROM admitted)
        WHERE uid = ${userParam} AND EXISTS (SELECT 1 FROM admitted)
        RETURNING uid)`;
}

function admitSql(services: AdmissionPorts): string {
  const sqlEnqueue = services.runQueue.sqlEnqueue;
  // Marked queued up front: either the job is inserted with the run, or enqueue follows at once (a
  // failed enqueue clears it for the sweeper).
  return `WITH wanted AS (
       SELECT e.ord, w.* FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(value, ord),
         jsonb_to_record(e.value) AS w(uid uuid, circuit_uid uuid, circuit_version_uid uuid, input jsonb,
           is_public boolean, webhook_url text, webhook_events text[], deadline_s int, alias text, replay_of uuid, replay_mode text, cache_bypass boolean, traceparent text,
           tags text[], metadata jsonb, max_credits bigint, spend_token_uid uuid, spend_day date)),
     ${holdCtes('$1', '$3')},
     run AS (
       INSERT INTO circuit_runs (uid, user_uid, circuit_uid, circuit_version_uid, input, is_public, credits_held, enqueued_at, webhook_url, webhook_events, deadline_at, alias, replay_of, replay_mode, cache_bypass, traceparent, tags, metadata, max_credits, spend_token_uid, spend_day)
       SELECT a.uid, hold.uid, a.circuit_uid, a.circuit_version_uid, a.input, a.is_public, $3::bigint, now(), a.webhook_url, a.webhook_events,
              now() + make_interval(secs => a.deadline_s), a.alias, a.replay_of, a.replay_mode, coalesce(a.cache_bypass, false), a.traceparent,
              a.tags, a.metadata, a.max_credits, a.spend_token_uid, a.spend_day
         FROM admitted a CROSS JOIN hold
       RETURNING *)${sqlEnqueue ? `,
     job AS (${sqlEnqueue.jobCte})
     SELECT run.* FROM run CROSS JOIN (SELECT count(${sqlEnqueue.notifyColumn}) FROM job) notified` : `
     SELECT run.* FROM run`}`;
}

/** A query ready to be admitted: its run's uid and its row as JSON, serialised once whatever batch it joins. */
interface Prepared { uid: string; json: string }

function prepare(fields: RunFields): Prepared {
  const uid = crypto.randomUUID();
  const json = JSON.stringify({
    uid, circuit_uid: fields.circuit_uid, circuit_version_uid: fields.circuit_version_uid, input: fields.input, is_public: fields.is_public,
    webhook_url: fields.webhook_url, webhook_events: fields.webhook_events, deadline_s: fields.deadline_s, alias: fields.alias ?? null,
    replay_of: fields.replay_of ?? null, replay_mode: fields.replay_mode ?? null, cache_bypass: fields.cache_bypass ?? false, traceparent: fields.traceparent ?? null,
    tags: fields.tags ?? null, metadata: fields.metadata ?? null, max_credits: fields.max_credits ?? null,
    ...(fields.spend_token_uid ? { spend_token_uid: fields.spend_token_uid, spend_day: fields.spend_day } : {}),
  });
  return { uid, json };
}

async function admitAll(services: AdmissionPorts, userUid: string, batch: Prepared[], transaction?: Transaction): Promise<Array<AdmittedRun | null>> {
  const rows = await preparedQuery<{ uid: string }>(services.sequelize, admitSql(services), [userUid, `[${batch.map((p) => p.json).join(',')}]`, RUN_BASE_CREDITS], transaction);
  const queued = services.runQueue.sqlEnqueue !== undefined;
  const byUid = new Map(rows.map((row) => [row.uid, row]));
  return batch.map(({ uid }) => {
    const row = byUid.get(uid);
    return row ? { run: CircuitRun.build(row as never, { isNewRecord: false, raw: true }), queued } : null;
  });
}

/**
 * Admits runs, one statement in flight per user (src/db/statement-batcher.ts): queries of a user that
 * arrive while one of theirs is being written wait and go together in the next statement. The user row
 * is locked until a statement's commit is on disk, so one at a time per user is all the database allows
 * anyway; batching makes a busy user's queries share that wait instead of queueing for one flush each.
 * A lone query goes at once; one bad query (say, its circuit deleted meanwhile) fails only itself.
 */
export class RunAdmission {
  private readonly batcher: StatementBatcher<Prepared, AdmittedRun | null>;

  constructor(private readonly services: AdmissionPorts) {
    this.batcher = new StatementBatcher((userUid, batch) => admitAll(this.services, userUid, batch), {
      maxItems: MAX_BATCH, weight: (prepared) => prepared.json.length, maxWeight: MAX_BATCH_BYTES,
    });
  }

  /** Null when the balance could not cover the base credit. In a transaction: admitted alone, within it. */
  admit(fields: RunFields, transaction?: Transaction): Promise<AdmittedRun | null> {
    const prepared = prepare(fields);
    if (transaction) return admitAll(this.services, fields.user_uid, [prepared], transaction).then(([one]) => one);
    return this.batcher.submit(fields.user_uid, prepared);
  }
}

/** A batch's runs as createBatch (src/runs/batches.ts) checked them: one version, its inputs in order, common fields. */
export interface BatchAdmission {
  uid: string;
  userUid: string;
  circuitUid: string;
  versionUid: string;
  inputs: Record<string, unknown>[];
  isPublic: boolean;
  webhook: { url: string; events: string[] | null } | null;
  deadlineSeconds: number;
  alias: string | null;
  tags: string[] | null;
  metadata: Record<string, string> | null;
  maxCredits: number | null;
}

/** What a batch's statement did: when the batch was created, how many runs it admitted and refused. */
export interface AdmittedBatch { created_at: Date; admitted: number; refused: number }

const REFUSED_ERROR = JSON.stringify({ code: 'InsufficientCredits', message: `The balance could not cover the ${RUN_BASE_CREDITS} credit this run needs when its batch was submitted` });

/**
 * One statement admits a whole batch: its header, then, with the user row locked, its runs in input
 * order (holdCtes) — those the unheld balance covers PROVISIONED with their base credit held and their jobs
 * queued (`sqlEnqueue`), the rest at once EXCEPTION InsufficientCredits (never started, charged nothing).
 */
function admitBatchSql(services: AdmissionPorts): string {
  const sqlEnqueue = services.runQueue.sqlEnqueue;
  return `WITH batch AS (
       INSERT INTO circuit_batches (uid, user_uid, circuit_uid, total) VALUES ($1, $2, $3, $4) RETURNING uid, created_at),
     wanted AS (
       SELECT e.ord, e.value AS input, gen_random_uuid() AS uid FROM jsonb_array_elements($5::jsonb) WITH ORDINALITY AS e(value, ord)),
     ${holdCtes('$2', '$6')},
     run AS (
       INSERT INTO circuit_runs (uid, user_uid, circuit_uid, circuit_version_uid, input, is_public, credits_held, enqueued_at, webhook_url, webhook_events,
                                 deadline_at, alias, tags, metadata, max_credits, batch_uid, created_at)
       SELECT a.uid, hold.uid, $3, $7, a.input, $8, $6::bigint, now(), $9, $10::text[], now() + make_interval(secs => $11), $12, $13::text[], $14::jsonb, $15, batch.uid,
              clock_timestamp()
         FROM admitted a CROSS JOIN hold CROSS JOIN batch
        ORDER BY a.ord
       RETURNING uid),
     refused AS (
       INSERT INTO circuit_runs (uid, user_uid, circuit_uid, circuit_version_uid, input, is_public, state, ended_at, error, failure_reason, credits_cost,
                                 webhook_url, webhook_events, alias, tags, metadata, max_credits, batch_uid, created_at)
       SELECT w.uid, $2, $3, $7, w.input, $8, 'EXCEPTION', now(), $16::jsonb, 'InsufficientCredits: not admitted with its batch', 0,
              $9, $10::text[], $12, $13::text[], $14::jsonb, $15, batch.uid, clock_timestamp()
         FROM wanted w CROSS JOIN batch
        WHERE NOT EXISTS (SELECT 1 FROM admitted a WHERE a.ord = w.ord)
        ORDER BY w.ord
       RETURNING uid)${sqlEnqueue ? `,
     job AS (${sqlEnqueue.jobCte})
     SELECT (SELECT created_at FROM batch), (SELECT count(*) FROM run)::int AS admitted, (SELECT count(*) FROM refused)::int AS refused,
            (SELECT count(${sqlEnqueue.notifyColumn}) FROM job)::int AS queued` : `
     SELECT (SELECT created_at FROM batch), (SELECT count(*) FROM run)::int AS admitted, (SELECT count(*) FROM refused)::int AS refused, 0 AS queued`}`;
}

/**
 * Admits a batch (POST /circuit-adaptors/{uid}/batches) in one statement, under the same balance rule as
 * single runs. With a job store that queues in SQL the admitted runs' jobs are in it; otherwise the
 * caller queues them.
 */
export async function admitBatch(services: AdmissionPorts, batch: BatchAdmission): Promise<AdmittedBatch> {
  const [admitted] = await preparedQuery<AdmittedBatch>(services.sequelize, admitBatchSql(services), [
    batch.uid, batch.userUid, batch.circuitUid, batch.inputs.length, JSON.stringify(batch.inputs), RUN_BASE_CREDITS, batch.versionUid, batch.isPublic,
    batch.webhook?.url ?? null, batch.webhook?.events ?? null, batch.deadlineSeconds, batch.alias, batch.tags,
    batch.metadata === null ? null : JSON.stringify(batch.metadata), batch.maxCredits, REFUSED_ERROR,
  ]);
  return admitted;
}
