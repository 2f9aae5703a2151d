import crypto from 'node:crypto';
import type { Transaction } from 'sequelize';
import {
  CircuitRun,
  RUN_COLUMNS,
  RUN_DRAFT_COLUMNS,
  runColumnSqlType,
  type RunDraft,
  type RunDraftColumn,
} from '../models/CircuitRun';
import { RUN_BASE_CREDITS } from '../credits/holds';
import { preparedQuery } from '../db/prepared';
import type { Sequelize } from 'sequelize';
import type { RunQueue } from '../queue/agenda';
import { StatementBatcher } from '../db/statement-batcher';

/** What a new run is made of, as create-run resolved it: its draft (RUN_COLUMNS' `draft`, src/models/CircuitRun.ts). */
export type RunFields = RunDraft;

/**
 * The draft's columns as the admission statements write them: all but `user_uid`, which each statement
 * takes from its parameter (one user per statement). Their list, the `name type` record the statements
 * read a draft's JSON with, and that JSON, follow from RUN_COLUMNS.
 */
type StatementColumn = Exclude<RunDraftColumn, 'user_uid'>;
const DRAFT_COLUMNS = RUN_DRAFT_COLUMNS.filter((column): column is StatementColumn => column !== 'user_uid');
/** A batch's draft is common to its runs, but their inputs. */
const BATCH_COLUMNS = DRAFT_COLUMNS.filter((column) => column !== 'input');

/** `name type, …` of `columns`, for `jsonb_to_record(…) AS x(…)`; built once, the model initialised, on first use. */
const records = new Map<readonly StatementColumn[], string>();
function recordOf(columns: readonly StatementColumn[]): string {
  let record = records.get(columns);
  if (record === undefined)
    records.set(columns, (record = columns.map((column) => `${column} ${runColumnSqlType(column)}`).join(', ')));
  return record;
}
/** `from.name, …` of `columns`. */
const valuesOf = (from: string, columns: readonly StatementColumn[]) =>
  columns.map((column) => `${from}.${column}`).join(', ');

/** A draft as the JSON its statement reads: every statement column, a left-out one as its default or null. */
function draftRow(draft: Partial<RunDraft>, columns: readonly StatementColumn[]): Record<string, unknown> {
  const row: Record<string, unknown> = { deadline_s: draft.deadline_s };
  for (const column of columns)
    row[column] = draft[column] ?? (RUN_COLUMNS[column] as { defaultValue?: unknown }).defaultValue ?? null;
  return row;
}

/**
 * A run admitted: inserted PROVISIONED with its base credit held; `queued` false means the caller
 * enqueues through Agenda, unless the run is parked (`run.parked_at`, a delayed start: nobody queues it now).
 */
export interface AdmittedRun {
  run: CircuitRun;
  queued: boolean;
}

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
export interface AdmissionPorts {
  sequelize: Sequelize;
  runQueue: Pick<RunQueue, 'sqlEnqueue'>;
}

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

/**
 * How a draft's row starts (`from` its alias): at once, marked queued; or, with a `wake_at` (a delayed
 * start, docs/runs.md), parked until then and not queued. Either way its deadline counts from its start.
 * The columns `enqueued_at, parked_at, deadline_at`, and their values.
 */
const START_COLUMNS = 'enqueued_at, parked_at, deadline_at';
const startValues = (from: string) =>
  `CASE WHEN ${from}.wake_at IS NULL THEN now() END, CASE WHEN ${from}.wake_at IS NOT NULL THEN now() END,
       COALESCE(${from}.wake_at, now()) + make_interval(secs => ${from}.deadline_s)`;

/**
 * The CTEs that count the runs `from` inserts in their concurrency keys' rows (migration 0036): each key's runs in
 * flight (`run_key_ends.in_flight`), its row made when it has none, and then, for a key whose ends row this statement
 * made, its slots row, which the claim statement locks and counts. A key has both rows or neither: the end of its
 * last run deletes both, holding the ends row, which this statement locks first (in key order), so the two are
 * deleted before it makes them again, or not at all. A key that had its rows keeps its slots row untouched: this
 * statement, holding the ends row, never waits for a claim that holds the slots row (that claim may be waiting for a
 * run whose end waits for the ends row). `xmax = 0` is how PostgreSQL tells a row an upsert inserted from one it
 * updated. Nothing for runs without a key.
 */
const keyRowsCtes = (from: string) => `,
     key_ends AS (
       INSERT INTO run_key_ends AS e (key, in_flight)
       SELECT concurrency_key, count(*) FROM ${from} WHERE concurrency_key IS NOT NULL GROUP BY concurrency_key ORDER BY concurrency_key
       ON CONFLICT (key) DO UPDATE SET in_flight = e.in_flight + EXCLUDED.in_flight
       RETURNING key, xmax = 0 AS made),
     key_slots AS (
       INSERT INTO run_key_slots (key) SELECT key FROM key_ends WHERE made ORDER BY key ON CONFLICT DO NOTHING)`;

function admitSql(services: AdmissionPorts): string {
  const sqlEnqueue = services.runQueue.sqlEnqueue;
  // Marked queued up front: either the job is inserted with the run, or enqueue follows at once (a
  // failed enqueue clears it for the sweeper). `run`, what the job CTE queues, leaves parked runs out.
  return `WITH wanted AS (
       SELECT e.ord, w.* FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(value, ord),
         jsonb_to_record(e.value) AS w(uid uuid, deadline_s int, ${recordOf(DRAFT_COLUMNS)})),
     ${holdCtes('$1', '$3')},
     inserted AS (
       INSERT INTO circuit_runs (uid, user_uid, ${DRAFT_COLUMNS.join(', ')}, credits_held, ${START_COLUMNS})
       SELECT a.uid, hold.uid, ${valuesOf('a', DRAFT_COLUMNS)}, $3::bigint, ${startValues('a')}
         FROM admitted a CROSS JOIN hold
       RETURNING *)${keyRowsCtes('inserted')}${
         sqlEnqueue
           ? `,
     run AS (SELECT uid FROM inserted WHERE parked_at IS NULL),
     job AS (${sqlEnqueue.jobCte})
     SELECT inserted.* FROM inserted CROSS JOIN (SELECT count(${sqlEnqueue.notifyColumn}) FROM job) notified`
           : `
     SELECT inserted.* FROM inserted`
       }`;
}

/** A query ready to be admitted: its run's uid and its row as JSON, serialised once whatever batch it joins. */
interface Prepared {
  uid: string;
  json: string;
}

function prepare(fields: RunFields): Prepared {
  const uid = crypto.randomUUID();
  return { uid, json: JSON.stringify({ uid, ...draftRow(fields, DRAFT_COLUMNS) }) };
}

async function admitAll(
  services: AdmissionPorts,
  userUid: string,
  batch: Prepared[],
  transaction?: Transaction,
): Promise<Array<AdmittedRun | null>> {
  const rows = await preparedQuery<{ uid: string }>(
    services.sequelize,
    admitSql(services),
    [userUid, `[${batch.map((p) => p.json).join(',')}]`, RUN_BASE_CREDITS],
    transaction,
  );
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
      maxItems: MAX_BATCH,
      weight: (prepared) => prepared.json.length,
      maxWeight: MAX_BATCH_BYTES,
    });
  }

  /** Null when the balance could not cover the base credit. In a transaction: admitted alone, within it. */
  admit(fields: RunFields, transaction?: Transaction): Promise<AdmittedRun | null> {
    const prepared = prepare(fields);
    if (transaction) return admitAll(this.services, fields.user_uid, [prepared], transaction).then(([one]) => one);
    return this.batcher.submit(fields.user_uid, prepared);
  }
}

/**
 * A batch's runs as createBatch (src/runs/batches.ts) checked them: its inputs in order, the draft of one version
 * common to its runs, and each input's concurrency key (`keys`, in input order; absent: none).
 */
export interface BatchAdmission {
  uid: string;
  inputs: Record<string, unknown>[];
  draft: Omit<RunDraft, 'input'>;
  keys?: ReadonlyArray<string | null>;
}

/** What a batch's run takes from its own input rather than the common draft (`w`, the input's row). */
const PER_INPUT_COLUMNS: Partial<Record<StatementColumn, string>> = { concurrency_key: 'w.concurrency_key' };
const batchValues = (columns: readonly StatementColumn[]) =>
  columns.map((column) => PER_INPUT_COLUMNS[column] ?? `c.${column}`).join(', ');

/** What a batch's statement did: when the batch was created, how many runs it admitted and refused. */
export interface AdmittedBatch {
  created_at: Date;
  admitted: number;
  refused: number;
  /** The admitted runs (PROVISIONED), for whoever queues them and for the run events. */
  run_uids: string[];
}

const REFUSED_ERROR = JSON.stringify({
  code: 'InsufficientCredits',
  message: `The balance could not cover the ${RUN_BASE_CREDITS} credit this run needs when its batch was submitted`,
});

/**
 * One statement admits a whole batch: its header, then, with the user row locked, its runs in input
 * order (holdCtes) — those the unheld balance covers PROVISIONED with their base credit held and their jobs
 * queued (`sqlEnqueue`; parked instead, not queued, with a delayed start), the rest at once EXCEPTION
 * InsufficientCredits (never started, charged nothing).
 */
function admitBatchSql(services: AdmissionPorts): string {
  const sqlEnqueue = services.runQueue.sqlEnqueue;
  return `WITH batch AS (
       INSERT INTO circuit_batches (uid, user_uid, circuit_uid, total) VALUES ($1, $2, $3, $4) RETURNING uid, created_at),
     common AS (
       SELECT c.* FROM jsonb_to_record($7::jsonb) AS c(deadline_s int, ${recordOf(BATCH_COLUMNS)})),
     wanted AS (
       SELECT e.ord, e.value AS input, gen_random_uuid() AS uid, k.key AS concurrency_key
         FROM jsonb_array_elements($5::jsonb) WITH ORDINALITY AS e(value, ord)
         LEFT JOIN unnest($9::text[]) WITH ORDINALITY AS k(key, ord) ON k.ord = e.ord),
     ${holdCtes('$2', '$6')},
     inserted AS (
       INSERT INTO circuit_runs (uid, user_uid, input, ${BATCH_COLUMNS.join(', ')}, credits_held, ${START_COLUMNS}, batch_uid, created_at)
       SELECT w.uid, hold.uid, w.input, ${batchValues(BATCH_COLUMNS)}, $6::bigint, ${startValues('c')},
              batch.uid, clock_timestamp()
         FROM admitted w CROSS JOIN hold CROSS JOIN batch CROSS JOIN common c
        ORDER BY w.ord
       RETURNING uid, parked_at, concurrency_key)${keyRowsCtes('inserted')},
     refused AS (
       INSERT INTO circuit_runs (uid, user_uid, input, ${BATCH_COLUMNS.join(', ')}, state, ended_at, error, failure_reason, credits_cost, batch_uid, created_at)
       SELECT w.uid, $2, w.input, ${batchValues(BATCH_COLUMNS)}, 'EXCEPTION', now(), $8::jsonb, 'InsufficientCredits: not admitted with its batch', 0,
              batch.uid, clock_timestamp()
         FROM wanted w CROSS JOIN batch CROSS JOIN common c
        WHERE NOT EXISTS (SELECT 1 FROM admitted a WHERE a.ord = w.ord)
        ORDER BY w.ord
       RETURNING uid)${
         sqlEnqueue
           ? `,
     run AS (SELECT uid FROM inserted WHERE parked_at IS NULL),
     job AS (${sqlEnqueue.jobCte})
     SELECT (SELECT created_at FROM batch), (SELECT count(*) FROM inserted)::int AS admitted, (SELECT count(*) FROM refused)::int AS refused,
            (SELECT coalesce(array_agg(uid::text), '{}') FROM inserted) AS run_uids, (SELECT count(${sqlEnqueue.notifyColumn}) FROM job)::int AS queued`
           : `
     SELECT (SELECT created_at FROM batch), (SELECT count(*) FROM inserted)::int AS admitted, (SELECT count(*) FROM refused)::int AS refused,
            (SELECT coalesce(array_agg(uid::text), '{}') FROM inserted) AS run_uids, 0 AS queued`
       }`;
}

/**
 * Admits a batch (POST /circuit-adaptors/{uid}/batches) in one statement, under the same balance rule as
 * single runs. With a job store that queues in SQL the admitted runs' jobs are in it; otherwise the
 * caller queues them.
 */
export async function admitBatch(services: AdmissionPorts, batch: BatchAdmission): Promise<AdmittedBatch> {
  const { draft } = batch;
  const [admitted] = await preparedQuery<AdmittedBatch>(services.sequelize, admitBatchSql(services), [
    batch.uid,
    draft.user_uid,
    draft.circuit_uid,
    batch.inputs.length,
    JSON.stringify(batch.inputs),
    RUN_BASE_CREDITS,
    JSON.stringify(draftRow(draft, BATCH_COLUMNS)),
    REFUSED_ERROR,
    batch.keys ?? [],
  ]);
  return admitted;
}

/**
 * A replay by filter (src/runs/bulk-runs.ts): the ended runs replayed (`sources`, in order), and the draft
 * common to the replays; each replay takes its circuit, version, input and priority from the run it
 * replays (REPLAYED_COLUMNS), the rest from `draft` (a fresh run's: no webhook, tags or metadata).
 */
export interface ReplayAdmission {
  /** The batch the replays form. */
  uid: string;
  /** The batch's circuit when every replayed run is of one circuit; null otherwise. */
  circuitUid: string | null;
  sources: readonly string[];
  draft: Omit<RunDraft, 'input' | 'circuit_uid' | 'circuit_version_uid'>;
}

/** What a replay takes from the run it replays (`o`, that run's row), by draft column; the others come from the common draft. */
const REPLAYED_COLUMNS: Partial<Record<StatementColumn, string>> = {
  circuit_uid: 'w.circuit_uid',
  circuit_version_uid: 'w.circuit_version_uid',
  input: 'w.input',
  replay_of: 'w.of_uid',
  priority: 'w.priority',
  concurrency_key: 'w.concurrency_key',
  concurrency_limit: 'w.concurrency_limit',
};
const replayValues = (columns: readonly StatementColumn[]) =>
  columns.map((column) => REPLAYED_COLUMNS[column] ?? `c.${column}`).join(', ');

/**
 * One statement replays up to 10,000 ended runs as a batch, as admitBatchSql admits one: its header, then, with
 * the user row locked, the replays in order (holdCtes) — those the unheld balance covers PROVISIONED with their
 * base credit held and their jobs queued, the rest at once EXCEPTION InsufficientCredits. Only the user's own
 * ended runs are read (`$2`), whatever uids are sent.
 */
function admitReplaysSql(services: AdmissionPorts): string {
  const sqlEnqueue = services.runQueue.sqlEnqueue;
  return `WITH batch AS (
       INSERT INTO circuit_batches (uid, user_uid, circuit_uid, total) VALUES ($1, $2, $3, $4) RETURNING uid, created_at),
     common AS (
       SELECT c.* FROM jsonb_to_record($7::jsonb) AS c(deadline_s int, ${recordOf(DRAFT_COLUMNS)})),
     wanted AS (
       SELECT row_number() OVER (ORDER BY s.ord) AS ord, gen_random_uuid() AS uid, o.uid AS of_uid, o.circuit_uid,
              o.circuit_version_uid, o.input, o.priority, o.concurrency_key, o.concurrency_limit
         FROM unnest($5::uuid[]) WITH ORDINALITY AS s(uid, ord)
         JOIN circuit_runs o ON o.uid = s.uid AND o.user_uid = $2 AND o.state IN ('COMPLETED', 'EXCEPTION')),
     ${holdCtes('$2', '$6')},
     inserted AS (
       INSERT INTO circuit_runs (uid, user_uid, ${DRAFT_COLUMNS.join(', ')}, credits_held, ${START_COLUMNS}, batch_uid, created_at)
       SELECT w.uid, hold.uid, ${replayValues(DRAFT_COLUMNS)}, $6::bigint, ${startValues('c')}, batch.uid, clock_timestamp()
         FROM admitted w CROSS JOIN hold CROSS JOIN batch CROSS JOIN common c
        ORDER BY w.ord
       RETURNING uid, parked_at, concurrency_key)${keyRowsCtes('inserted')},
     refused AS (
       INSERT INTO circuit_runs (uid, user_uid, ${DRAFT_COLUMNS.join(', ')}, state, ended_at, error, failure_reason, credits_cost, batch_uid, created_at)
       SELECT w.uid, $2, ${replayValues(DRAFT_COLUMNS)}, 'EXCEPTION', now(), $8::jsonb, 'InsufficientCredits: not admitted with its batch', 0,
              batch.uid, clock_timestamp()
         FROM wanted w CROSS JOIN batch CROSS JOIN common c
        WHERE NOT EXISTS (SELECT 1 FROM admitted a WHERE a.ord = w.ord)
        ORDER BY w.ord
       RETURNING uid)${
         sqlEnqueue
           ? `,
     run AS (SELECT uid FROM inserted WHERE parked_at IS NULL),
     job AS (${sqlEnqueue.jobCte})
     SELECT (SELECT created_at FROM batch), (SELECT count(*) FROM inserted)::int AS admitted, (SELECT count(*) FROM refused)::int AS refused,
            (SELECT coalesce(array_agg(uid::text), '{}') FROM inserted) AS run_uids, (SELECT count(${sqlEnqueue.notifyColumn}) FROM job)::int AS queued`
           : `
     SELECT (SELECT created_at FROM batch), (SELECT count(*) FROM inserted)::int AS admitted, (SELECT count(*) FROM refused)::int AS refused,
            (SELECT coalesce(array_agg(uid::text), '{}') FROM inserted) AS run_uids, 0 AS queued`
       }`;
}

/**
 * Replays ended runs as one batch in one statement (a replay by filter), under the same balance rule as a
 * batch; in `transaction` when given (the Idempotency-Key's answer is written in it). With a job store that
 * queues in SQL their jobs are in it; otherwise the caller queues them.
 */
export async function admitReplays(
  services: AdmissionPorts,
  replays: ReplayAdmission,
  transaction?: Transaction,
): Promise<AdmittedBatch> {
  const [admitted] = await preparedQuery<AdmittedBatch>(
    services.sequelize,
    admitReplaysSql(services),
    [
      replays.uid,
      replays.draft.user_uid,
      replays.circuitUid,
      replays.sources.length,
      replays.sources,
      RUN_BASE_CREDITS,
      JSON.stringify(draftRow(replays.draft, DRAFT_COLUMNS)),
      REFUSED_ERROR,
    ],
    transaction,
  );
  return admitted;
}
