import type { Sequelize } from 'sequelize';
import { preparedQuery } from '../db/prepared';
import { StatementBatcher } from '../db/statement-batcher';
import { toStorableText } from './storable-json';
import type { ApprovalDecision, ApprovalRequest, JournalEntry, StepJournal } from '../engine/run-control';
import type { RunEventBus } from './events/bus';

/**
 * A run's durable step record (docs/runs.md, Durable steps; Approvals), table `circuit_run_steps` (migration 0018). The
 * engine asks it for what an earlier attempt finished, writes each step with an effect outside the run
 * as it completes, and waits here on approval steps. Every write is fenced by the run's attempt, so an
 * attempt that lost the run writes nothing.
 */

interface StepRow {
  path: string;
  kind: string;
  status: JournalEntry['status'];
  output: unknown;
  credits: number;
  usage: JournalEntry['usage'] | null;
  started_at: Date;
  ended_at: Date | null;
  prompt: string | null;
  expires_at: Date | null;
  on_timeout: 'approve' | 'reject' | null;
  decision: ApprovalDecision | null;
}

const iso = (value: Date | string | null): string | undefined =>
  value === null ? undefined : new Date(value).toISOString();

function entryOf(row: StepRow): JournalEntry {
  return {
    status: row.status,
    kind: row.kind,
    output: row.output,
    credits: Number(row.credits),
    ...(row.usage ? { usage: row.usage } : {}),
    started_at: iso(row.started_at)!,
    ...(row.ended_at ? { ended_at: iso(row.ended_at) } : {}),
    ...(row.prompt !== null ? { prompt: row.prompt } : {}),
    ...(row.expires_at ? { expires_at: iso(row.expires_at) } : {}),
    ...(row.decision ? { decision: row.decision } : {}),
  };
}

const STEP_COLUMNS =
  'path, kind, status, output, credits, usage, started_at, ended_at, prompt, expires_at, on_timeout, decision';

/** Everything earlier attempts of a run recorded, by path. */
export async function loadStepJournal(sequelize: Sequelize, runUid: string): Promise<Map<string, JournalEntry>> {
  const rows = await preparedQuery<StepRow>(
    sequelize,
    `SELECT ${STEP_COLUMNS} FROM circuit_run_steps WHERE run_uid = $1`,
    [runUid],
  );
  return new Map(rows.map((row) => [row.path, entryOf(row)]));
}

type StepRecord = Parameters<StepJournal['complete']>[1];
interface CompletedItem {
  runUid: string;
  attempt: number;
  path: string;
  record: StepRecord;
}

/** Completed steps of many runs, written together while another such write is in flight (one per process: RunService.journalWrites). */
export type JournalWriter = StatementBatcher<CompletedItem, void>;

export function createJournalWriter(sequelize: Sequelize): JournalWriter {
  return new StatementBatcher(
    async (_key, items) => {
      const rows = items.map(({ runUid, attempt, path, record }) => ({
        run_uid: runUid,
        attempt,
        path,
        kind: record.kind,
        output: toStorableText(record.output ?? null),
        credits: record.credits,
        usage: record.usage ?? null,
        started_at: record.started_at,
        ended_at: record.ended_at,
      }));
      await preparedQuery(
        sequelize,
        `INSERT INTO circuit_run_steps (run_uid, path, kind, status, attempt, output, credits, usage, started_at, ended_at)
         SELECT s.run_uid, s.path, s.kind, 'completed', s.attempt, s.output, s.credits, s.usage, s.started_at, s.ended_at
           FROM jsonb_to_recordset($1::jsonb) AS s(run_uid uuid, attempt integer, path text, kind text, output jsonb, credits integer, usage jsonb, started_at timestamptz, ended_at timestamptz)
           JOIN circuit_runs r ON r.uid = s.run_uid AND r.state = 'RUNNING' AND r.attempt = s.attempt
         -- A step executed again in one attempt (an embedded run retried by its step policy) keeps its latest output.
         ON CONFLICT (run_uid, path) DO UPDATE SET output = EXCLUDED.output, credits = EXCLUDED.credits, usage = EXCLUDED.usage,
           started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at, attempt = EXCLUDED.attempt
           WHERE circuit_run_steps.status = 'completed'`,
        [JSON.stringify(rows)],
      );
      return items.map(() => undefined);
    },
    { maxItems: 100 },
  );
}

/** Starts waiting on an approval step: its row and the run's pause, in one statement; the row's expiry, or null when the run is not this attempt's. */
async function startWaiting(
  sequelize: Sequelize,
  runUid: string,
  attempt: number,
  path: string,
  request: ApprovalRequest,
): Promise<JournalEntry | null> {
  const rows = await preparedQuery<StepRow>(
    sequelize,
    `WITH run AS (
       UPDATE circuit_runs SET paused_at = COALESCE(paused_at, now()), updated_at = now()
        WHERE uid = $1 AND state = 'RUNNING' AND attempt = $2 RETURNING uid)
     INSERT INTO circuit_run_steps (run_uid, path, kind, status, attempt, prompt, expires_at, on_timeout, started_at)
     SELECT run.uid, $3, 'approval', 'waiting', $2, $4, now() + make_interval(secs => $5), $6, now() FROM run
     ON CONFLICT (run_uid, path) DO UPDATE SET attempt = EXCLUDED.attempt
     RETURNING ${STEP_COLUMNS}`,
    [runUid, attempt, path, request.prompt, request.timeoutSeconds, request.onTimeout],
  );
  return rows[0] ? entryOf(rows[0]) : null;
}

async function readStep(sequelize: Sequelize, runUid: string, path: string): Promise<JournalEntry | null> {
  const rows = await preparedQuery<StepRow>(
    sequelize,
    `SELECT ${STEP_COLUMNS} FROM circuit_run_steps WHERE run_uid = $1 AND path = $2`,
    [runUid, path],
  );
  return rows[0] ? entryOf(rows[0]) : null;
}

/** An approval past its expiry decided by its `on_timeout`, unless a person decided first. */
async function expireApproval(sequelize: Sequelize, runUid: string, path: string): Promise<void> {
  await preparedQuery(
    sequelize,
    `UPDATE circuit_run_steps
        SET status = CASE on_timeout WHEN 'approve' THEN 'approved' ELSE 'rejected' END,
            decision = jsonb_build_object('approved', on_timeout = 'approve', 'comment', NULL, 'data', NULL,
                                          'resolved_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'timed_out', true)
      WHERE run_uid = $1 AND path = $2 AND status = 'waiting' AND expires_at <= now()`,
    [runUid, path],
  );
}

/**
 * Ends the run's pause once nothing waits any more: the deadline moves on by the time it was paused.
 * Returns the new deadline, or null while another approval still waits (or the run is not this attempt's).
 */
async function endPause(
  sequelize: Sequelize,
  runUid: string,
  attempt: number,
  defaultDeadlineSeconds: number,
): Promise<Date | null> {
  const rows = await preparedQuery<{ deadline_at: Date }>(
    sequelize,
    `UPDATE circuit_runs
        SET deadline_at = COALESCE(deadline_at, created_at + make_interval(secs => $3)) + (now() - paused_at), paused_at = NULL, updated_at = now()
      WHERE uid = $1 AND attempt = $2 AND state = 'RUNNING' AND paused_at IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM circuit_run_steps WHERE run_uid = $1 AND status = 'waiting')
      RETURNING deadline_at`,
    [runUid, attempt, defaultDeadlineSeconds],
  );
  return rows[0] ? new Date(rows[0].deadline_at) : null;
}

export interface RunJournalOptions {
  sequelize: Sequelize;
  writes: JournalWriter;
  runEvents: RunEventBus;
  runUid: string;
  attempt: number;
  defaultDeadlineSeconds: number;
  /** What earlier attempts recorded (empty on a first attempt). */
  entries: Map<string, JournalEntry>;
  /** The run's deadline stops while an approval waits, and starts again at the date given. */
  deadline: { pause(): void; resume(at: Date): void };
}

/** The journal of one attempt of one run. */
export function runJournal(options: RunJournalOptions): StepJournal {
  const { sequelize, writes, runEvents, runUid, attempt, entries, deadline } = options;
  return {
    recorded: (path) => entries.get(path),

    complete: (path, record) => writes.submit('', { runUid, attempt, path, record }),

    async waitForApproval(path, request, signal, onWaiting) {
      signal.throwIfAborted();
      let entry = entries.get(path) ?? null;
      if (entry?.status === 'waiting' || !entry) {
        const fresh = !entry;
        entry = await startWaiting(sequelize, runUid, attempt, path, request);
        if (!entry) throw new Error("the run is no longer this attempt's");
        if (entry.status === 'waiting') {
          deadline.pause();
          if (fresh) onWaiting(entry);
          entry = await waitForDecision(path, entry, signal);
        }
      }
      const resumed = await endPause(sequelize, runUid, attempt, options.defaultDeadlineSeconds);
      if (resumed) deadline.resume(resumed);
      return entry.decision!;
    },
  };

  /** Until a person decides, the step expires, or the run is stopped; wake messages say when to look. */
  async function waitForDecision(path: string, waiting: JournalEntry, signal: AbortSignal): Promise<JournalEntry> {
    let look: () => void = () => {};
    const unsubscribe = runEvents.subscribe(runUid, (message) => {
      if (message.wake) look();
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      for (;;) {
        const woken = new Promise<void>((resolve, reject) => {
          look = resolve;
          const onAbort = () => reject(signal.reason);
          if (signal.aborted) return onAbort();
          signal.addEventListener('abort', onAbort, { once: true });
          const left = new Date(waiting.expires_at!).getTime() - Date.now();
          // setTimeout holds at most ~24.8 days; an expiry further away is looked at again then.
          timer = setTimeout(resolve, Math.min(Math.max(0, left), 2 ** 31 - 1));
          timer.unref();
        });
        await woken;
        clearTimeout(timer);
        signal.throwIfAborted();
        if (new Date(waiting.expires_at!).getTime() <= Date.now()) await expireApproval(sequelize, runUid, path);
        const now = await readStep(sequelize, runUid, path);
        if (now && now.status !== 'waiting') return now;
      }
    } finally {
      clearTimeout(timer);
      unsubscribe();
    }
  }
}
