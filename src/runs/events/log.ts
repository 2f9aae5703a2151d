import { QueryTypes, type Sequelize } from 'sequelize';
import { preparedQuery } from '../../db/prepared';
import { StatementBatcher } from '../../db/statement-batcher';
import { ASYNC_COMMIT_COLUMN } from '../../db/async-commit';
import type { RunState } from '../../domain/runs';
import type { RunEventKind } from '../../models/RunEvent';
import { toStorableText } from '../storable-json';

/**
 * The durable run event log (docs/runs.md, Event log), table `circuit_run_events`. `seq` is gap-free per run:
 * `circuit_runs.event_seq` is raised under the run's row lock in the statement that inserts the events.
 * State events are written by the triggers of migration 0005 inside each state change; step and
 * output events are appended here in batches by the worker running the run.
 */

export interface LoggedRunEvent {
  seq: number;
  kind: RunEventKind;
  data: Record<string, unknown>;
  created_at: Date;
}

export interface PendingRunEvent {
  kind: Exclude<RunEventKind, 'state'>;
  data: Record<string, unknown>;
}

/** A batch of events as the jsonb array the log's statements unpack (`[{kind, data}]`). */
export function eventBatchJson(events: readonly PendingRunEvent[]): string {
  return JSON.stringify(events.map((e) => ({ kind: e.kind, data: toStorableText(e.data) })));
}

interface AppendItem {
  uid: string;
  attempt: number;
  events: readonly PendingRunEvent[];
}

/** Event batches of many runs, appended together while another append is in flight (one per process: RunService.eventAppends). */
export type EventAppender = StatementBatcher<AppendItem, number | null>;

/**
 * Appends step/output events for the attempt holding a RUNNING run, the batches of many runs in one
 * statement (StatementBatcher): each run's seqs are raised under its own row lock; with `notifyChannel`,
 * `{uid, seq}` is NOTIFYed on commit. Answers each batch's last seq, or null when its run is no longer
 * that attempt's (ended, taken over): its events are dropped, so nothing follows a terminal state. A run
 * appears at most once per statement (a run's recorder writes its batches one after another).
 */
export function createEventAppender(sequelize: Sequelize, notifyChannel?: string): EventAppender {
  const text = `WITH batch AS (
       SELECT b.uid, b.attempt, b.events, jsonb_array_length(b.events) AS n
         FROM jsonb_to_recordset($1::jsonb) AS b(uid uuid, attempt int, events jsonb)),
     run AS (
       UPDATE circuit_runs r SET event_seq = r.event_seq + batch.n
         FROM batch WHERE r.uid = batch.uid AND r.state = 'RUNNING' AND r.attempt = batch.attempt
       RETURNING r.uid, r.event_seq, batch.n, batch.events, ${ASYNC_COMMIT_COLUMN}),
     inserted AS (
       INSERT INTO circuit_run_events (run_uid, seq, kind, data)
       SELECT run.uid, run.event_seq - run.n + e.ord, e.value->>'kind', e.value->'data'
         FROM run, jsonb_array_elements(run.events) WITH ORDINALITY AS e(value, ord)
       RETURNING run_uid, seq)
     SELECT run_uid AS uid, max(seq) AS seq${notifyChannel ? `, pg_notify($2, json_build_object('uid', run_uid::text, 'seq', max(seq))::text) AS notified` : ''}
       FROM inserted GROUP BY run_uid`;
  const write = async (items: AppendItem[]): Promise<Array<number | null>> => {
    const json = JSON.stringify(
      items.map((item) => ({
        uid: item.uid,
        attempt: item.attempt,
        events: item.events.map((e) => ({ kind: e.kind, data: toStorableText(e.data) })),
      })),
    );
    const rows = await preparedQuery<{ uid: string; seq: number }>(sequelize, text, [
      json,
      ...(notifyChannel ? [notifyChannel] : []),
    ]);
    const seqs = new Map(rows.map((row) => [row.uid, Number(row.seq)]));
    return items.map((item) => seqs.get(item.uid) ?? null);
  };
  return new StatementBatcher(
    async (_key, items) => {
      const seen = new Set<string>();
      const first = items.filter((item) => !seen.has(item.uid) && seen.add(item.uid));
      if (first.length === items.length) return write(items);
      // Never expected (see above), but a repeat must not share a statement with its run's earlier batch.
      const answers = new Map<AppendItem, number | null>();
      (await write(first)).forEach((seq, i) => answers.set(first[i], seq));
      for (const item of items) if (!answers.has(item)) answers.set(item, (await write([item]))[0]);
      return items.map((item) => answers.get(item) ?? null);
    },
    { maxItems: 100 },
  );
}

export interface RunLogRead {
  /** Null when the run does not exist. */
  state: RunState | null;
  events: LoggedRunEvent[];
  /** Whether more events may follow beyond `limit`. */
  more: boolean;
}

/**
 * Events after `after` of the given kinds, and the run's state, in one statement (one snapshot): when
 * the state is terminal and nothing more is returned, the log is complete.
 */
export async function readRunEvents(
  sequelize: Sequelize,
  uid: string,
  after: number,
  kinds: readonly RunEventKind[],
  limit = 200,
): Promise<RunLogRead> {
  const rows = await preparedQuery<{
    state: RunState;
    seq: number | null;
    kind: RunEventKind | null;
    data: Record<string, unknown> | null;
    created_at: Date | null;
  }>(
    sequelize,
    `SELECT r.state, e.seq, e.kind, e.data, e.created_at
       FROM circuit_runs r
       LEFT JOIN LATERAL (
         SELECT seq, kind, data, created_at FROM circuit_run_events
          WHERE run_uid = r.uid AND seq > $2 AND kind = ANY($3::text[])
          ORDER BY seq LIMIT $4) e ON true
      WHERE r.uid = $1
      ORDER BY e.seq`,
    [uid, after, kinds, limit],
  );
  if (rows.length === 0) return { state: null, events: [], more: false };
  const events = rows
    .filter((r) => r.seq !== null)
    .map((r) => ({ seq: Number(r.seq), kind: r.kind!, data: r.data!, created_at: r.created_at! }));
  return { state: rows[0].state, events, more: events.length === limit };
}

/** Where a stream without a position starts: just before the run's current state event (the first event a client gets is the run as it is now). */
export async function currentStateSeq(sequelize: Sequelize, uid: string): Promise<number> {
  const [row] = await sequelize.query<{ seq: number | null }>(
    `SELECT max(seq) AS seq FROM circuit_run_events WHERE run_uid = $1 AND kind = 'state'`,
    { bind: [uid], type: QueryTypes.SELECT },
  );
  return Number(row?.seq ?? 1);
}

/**
 * The seq of the last state event at or before `state` (a `Last-Event-ID` from before event ids were
 * seqs named a state); 0 when there is none.
 */
export async function seqOfState(sequelize: Sequelize, uid: string, state: RunState): Promise<number> {
  const [row] = await sequelize.query<{ seq: number | null }>(
    `SELECT max(seq) AS seq FROM circuit_run_events
      WHERE run_uid = $1 AND kind = 'state'
        AND (CASE data->>'state' WHEN 'PROVISIONED' THEN 0 WHEN 'RUNNING' THEN 1 ELSE 2 END)
            <= (CASE $2::text WHEN 'PROVISIONED' THEN 0 WHEN 'RUNNING' THEN 1 ELSE 2 END)`,
    { bind: [uid, state], type: QueryTypes.SELECT },
  );
  return Number(row?.seq ?? 0);
}

/**
 * Retention (README "Run events"): step and output events of runs that ended more than
 * `retentionDays` ago are deleted; state events stay with the run. Deletes at most `limit` rows.
 */
export async function pruneRunEvents(sequelize: Sequelize, retentionDays: number, limit = 5_000): Promise<number> {
  const rows = await sequelize.query<{ seq: number }>(
    `DELETE FROM circuit_run_events WHERE ctid IN (
       SELECT ctid FROM circuit_run_events
        WHERE kind <> 'state' AND created_at < now() - make_interval(days => $1)
        LIMIT $2)
     RETURNING seq`,
    { bind: [retentionDays, limit], type: QueryTypes.SELECT },
  );
  return rows.length;
}
