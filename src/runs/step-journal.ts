import type { Sequelize } from 'sequelize';
import { ASYNC_COMMIT_COLUMN } from '../db/async-commit';
import { preparedQuery } from '../db/prepared';
import { StatementBatcher } from '../db/statement-batcher';
import { toStorableText } from './storable-json';
import { resumeHeldRun } from './transitions';
import { finishedCreditsSql } from '../credits/finished-credits';
import { entryOf, journalOf, STEP_COLUMNS, type StepRow } from './journal-rows';
import type { JournalEntry, StepJournal, WaitRequest } from '../engine/run-control';
import type { RunEventBus } from './events/bus';

/**
 * A run's durable step record (docs/runs.md, Durable steps; Approvals), table `circuit_run_steps` (migration 0018). The
 * engine asks it for what an earlier attempt finished, writes each step with an effect outside the run
 * as it completes, and waits here on approval steps. Every write is fenced by the run's attempt, so an
 * attempt that lost the run writes nothing.
 */

/** Everything earlier attempts of a run recorded, by path. */
export async function loadStepJournal(sequelize: Sequelize, runUid: string): Promise<Map<string, JournalEntry>> {
  const rows = await preparedQuery<StepRow>(
    sequelize,
    `SELECT ${STEP_COLUMNS} FROM circuit_run_steps WHERE run_uid = $1`,
    [runUid],
  );
  return journalOf(rows);
}

/** The credits of what the run's journal says finished (finishedCreditsSql). */
export async function finishedStepCredits(sequelize: Sequelize, runUid: string): Promise<number> {
  const rows = await preparedQuery<{ credits: string }>(
    sequelize,
    `SELECT ${finishedCreditsSql('$1::uuid')} AS credits`,
    [runUid],
  );
  return Number(rows[0]?.credits ?? 0);
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

/**
 * Starts a wait: its row and, when `pause` (no other step of the run is executing), the run's pause, in one statement;
 * the row (resolved already when a signal came first), or null when the run is not this attempt's.
 */
async function startWaiting(
  sequelize: Sequelize,
  runUid: string,
  attempt: number,
  path: string,
  kind: string,
  request: WaitRequest,
  pause: boolean,
): Promise<JournalEntry | null> {
  const approval = request.for === 'approval' ? request : null;
  const signal = request.for === 'signal' ? request : null;
  const time = request.for === 'time' ? request : null;
  const rows = await preparedQuery<StepRow>(
    sequelize,
    `WITH run AS (
       UPDATE circuit_runs SET paused_at = CASE WHEN $11 THEN COALESCE(paused_at, now()) ELSE paused_at END, updated_at = now()
        WHERE uid = $1 AND state = 'RUNNING' AND attempt = $2 RETURNING uid)
     INSERT INTO circuit_run_steps (run_uid, path, kind, status, attempt, prompt, expires_at, on_timeout, wait_for, schema, started_at)
     SELECT run.uid, $3, $4, 'waiting', $2, $5, COALESCE($6::timestamptz, now() + make_interval(secs => $7)), $8, $9, $10::jsonb, now() FROM run
     ON CONFLICT (run_uid, path) DO UPDATE SET attempt = EXCLUDED.attempt
     RETURNING ${STEP_COLUMNS}, ${ASYNC_COMMIT_COLUMN}`,
    [
      runUid,
      attempt,
      path,
      kind,
      approval?.prompt ?? null,
      time?.until ?? null,
      time?.seconds ?? approval?.timeoutSeconds ?? signal?.timeoutSeconds ?? 0,
      approval?.onTimeout ?? signal?.onTimeout ?? null,
      approval ? null : request.for,
      signal?.schema ? JSON.stringify(signal.schema) : null,
      pause,
    ],
  );
  return rows[0] ? entryOf(rows[0]) : null;
}

/** Pauses a run this attempt holds (its slots given up, its deadline stopped): every step of it in flight waits. */
async function pauseHeldRun(sequelize: Sequelize, runUid: string, attempt: number): Promise<void> {
  await preparedQuery(
    sequelize,
    `UPDATE circuit_runs SET paused_at = COALESCE(paused_at, now()), updated_at = now()
      WHERE uid = $1 AND state = 'RUNNING' AND attempt = $2`,
    [runUid, attempt],
  );
}

async function readStep(sequelize: Sequelize, runUid: string, path: string): Promise<JournalEntry | null> {
  const rows = await preparedQuery<StepRow>(
    sequelize,
    `SELECT ${STEP_COLUMNS} FROM circuit_run_steps WHERE run_uid = $1 AND path = $2`,
    [runUid, path],
  );
  return rows[0] ? entryOf(rows[0]) : null;
}

/**
 * The statement that resolves waits past their expiry, unless something resolved them first: an approval
 * by its `on_timeout`, a time wait as elapsed, a signal wait as timed out. Over `$1` run and `$2` paths.
 */
export const EXPIRE_WAITS_SQL = `
UPDATE circuit_run_steps
   SET status = CASE WHEN kind = 'approval' THEN CASE on_timeout WHEN 'approve' THEN 'approved' ELSE 'rejected' END
                     WHEN wait_for = 'time' THEN 'elapsed' ELSE 'timed_out' END,
       decision = CASE WHEN kind = 'approval' THEN
         jsonb_build_object('approved', on_timeout = 'approve', 'comment', NULL, 'data', NULL,
                            'resolved_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'timed_out', true) END
 WHERE run_uid = $1 AND path = ANY($2::text[]) AND status = 'waiting' AND expires_at <= now()`;

async function expireWait(sequelize: Sequelize, runUid: string, path: string): Promise<void> {
  await preparedQuery(sequelize, EXPIRE_WAITS_SQL, [runUid, [path]]);
}

export interface RunJournalOptions {
  sequelize: Sequelize;
  writes: JournalWriter;
  runEvents: RunEventBus;
  runUid: string;
  attempt: number;
  defaultDeadlineSeconds: number;
  /** USER_MAX_CONCURRENT_RUNS: a run that resumes takes its user's slot back within it. */
  userMaxConcurrent: number;
  /** What earlier attempts recorded (empty on a first attempt). */
  entries: Map<string, JournalEntry>;
  /** The run's deadline stops while a step waits, and starts again at the date given. */
  deadline: { pause(): void; resume(at: Date): void };
  /**
   * RUN_PARK_AFTER_S in ms: once every step in flight has waited this long, `park` is called with the
   * paths waited on (the attempt stops; the run becomes a row until a signal, decision or timer wakes it).
   */
  parkAfterMs: number;
  park(waiting: readonly string[]): void;
  /** The run was paused when this attempt took it (a wait still going on): its pause must be ended here. */
  paused: boolean;
  /**
   * Called when the run's waits are over but a slot it must take back is full (its user's or its concurrency key's):
   * the run was given back, marked waiting for a slot, and the attempt stops (the engine's signal is aborted).
   */
  awaitSlot(): void;
  /** The run paused while this attempt holds it: the slots it gave up may go to runs waiting for one. */
  slotsFreed(): void;
  /** The attempt's signal: once it is aborted (parked, given back, canceled) the run takes no slot back here. */
  signal: AbortSignal;
}

/** The journal of one attempt of one run. */
export function runJournal(options: RunJournalOptions): StepJournal {
  const { sequelize, writes, runEvents, runUid, attempt, entries, deadline } = options;
  /** Steps executing now; a step that waits is not counted. */
  let busy = 0;
  /** The run is paused (holds no slot, its deadline stopped): every step of it in flight waits. */
  let pauseHeld = options.paused;
  const waiting = new Set<string>();
  let parkTimer: NodeJS.Timeout | undefined;
  let pauseCheck: NodeJS.Immediate | undefined;
  /** This attempt's pause and resume statements, one after another. */
  let slotChanges: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(change: () => Promise<T>): Promise<T> => {
    const next = slotChanges.then(change);
    slotChanges = next.catch(() => undefined);
    return next;
  };

  /** Parks the run once only waits are in flight, for parkAfterMs. */
  const considerParking = () => {
    if (busy > 0 || waiting.size === 0) {
      clearTimeout(parkTimer);
      parkTimer = undefined;
      return;
    }
    parkTimer ??= setTimeout(() => {
      parkTimer = undefined;
      if (busy === 0 && waiting.size > 0) options.park([...waiting]);
    }, options.parkAfterMs);
    parkTimer.unref();
  };
  /**
   * Pauses the run once every step in flight waits (looked at once the current turn of the event loop is over: a step
   * that hands over to the steps it starts is not counted between the two). A pause that fails leaves the slots held.
   */
  const considerPausing = () => {
    if (busy > 0 || waiting.size === 0 || pauseHeld || pauseCheck) return;
    pauseCheck = setImmediate(() => {
      pauseCheck = undefined;
      if (busy > 0 || waiting.size === 0 || pauseHeld) return;
      pauseHeld = true;
      deadline.pause();
      void inTurn(() => pauseHeldRun(sequelize, runUid, attempt)).then(options.slotsFreed, () => undefined);
    });
  };
  /**
   * A step goes on while the run is paused: the run takes its slots back first, in turn with the runs waiting for one
   * (docs/fairness.md); when one is full the run is given back to wait for it and the attempt stops.
   */
  let givenBack = false;
  const resume = () =>
    inTurn(async () => {
      if (!pauseHeld || givenBack || options.signal.aborted) return;
      const resumed = await resumeHeldRun(
        sequelize,
        runUid,
        attempt,
        options.userMaxConcurrent,
        options.defaultDeadlineSeconds,
      );
      if (resumed === 'turnedAway') {
        givenBack = true;
        options.awaitSlot();
      } else if (resumed) {
        pauseHeld = false;
        deadline.resume(resumed.resumed);
      }
    });
  const changeBusy = (delta: 1 | -1) => {
    busy += delta;
    considerParking();
    considerPausing();
  };

  return {
    recorded: (path) => entries.get(path),

    complete: (path, record) => writes.submit('', { runUid, attempt, path, record }),

    // Only a wait that ends takes the slots back (waitFor): a paused run's other steps in flight are waits too, and a
    // step replayed from the journal at a claim executes nothing.
    busy: changeBusy,

    async waitFor(path, kind, request, signal, onWaiting) {
      signal.throwIfAborted();
      let entry = entries.get(path) ?? null;
      if (entry?.status === 'waiting' || !entry) {
        const fresh = !entry;
        // The only step executing starts to wait: the run pauses in the same statement. Otherwise it pauses when
        // the last of the others waits too (considerPausing).
        const pause = busy <= 1 && !pauseHeld;
        if (pause) {
          pauseHeld = true;
          deadline.pause();
        }
        entry = await inTurn(() => startWaiting(sequelize, runUid, attempt, path, kind, request, pause));
        if (!entry) throw new Error("the run is no longer this attempt's");
        // A wait that expired while nobody held the run (parked, or its worker gone) is over at once.
        if (entry.status === 'waiting' && new Date(entry.expires_at!).getTime() <= Date.now()) {
          await expireWait(sequelize, runUid, path);
          entry = (await readStep(sequelize, runUid, path)) ?? entry;
        }
        if (entry.status === 'waiting') {
          if (pause) options.slotsFreed();
          if (fresh) onWaiting(entry);
          waiting.add(path);
          changeBusy(-1);
          try {
            entry = await waitForResolution(path, entry, signal);
          } finally {
            waiting.delete(path);
            changeBusy(1);
          }
        }
      }
      // The step goes on; a paused run (this wait's pause, or one found at the claim) takes its slots back first.
      signal.throwIfAborted();
      await resume();
      signal.throwIfAborted();
      return entry;
    },
  };

  /** Until the wait is resolved (a decision, a signal, its expiry) or the run is stopped; wake messages say when to look. */
  async function waitForResolution(
    path: string,
    waitingEntry: JournalEntry,
    signal: AbortSignal,
  ): Promise<JournalEntry> {
    let look: () => void = () => {};
    const unsubscribe = runEvents.subscribe(runUid, (message) => {
      if (message.wake) look();
    });
    let timer: NodeJS.Timeout | undefined;
    const expiresAt = new Date(waitingEntry.expires_at!).getTime();
    try {
      for (;;) {
        const woken = new Promise<void>((resolve, reject) => {
          look = resolve;
          const onAbort = () => reject(signal.reason);
          if (signal.aborted) return onAbort();
          signal.addEventListener('abort', onAbort, { once: true });
          // setTimeout holds at most ~24.8 days; an expiry further away is looked at again then.
          timer = setTimeout(resolve, Math.min(Math.max(0, expiresAt - Date.now()), 2 ** 31 - 1));
          timer.unref();
        });
        await woken;
        clearTimeout(timer);
        signal.throwIfAborted();
        if (expiresAt <= Date.now()) await expireWait(sequelize, runUid, path);
        const now = await readStep(sequelize, runUid, path);
        if (now && now.status !== 'waiting') return now;
      }
    } finally {
      clearTimeout(timer);
      unsubscribe();
    }
  }
}
