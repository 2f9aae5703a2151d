import { QueryTypes, Sequelize } from 'sequelize';
import { preparedQuery } from '../db/prepared';
import { StatementBatcher } from '../db/statement-batcher';
import { claimOverdue, claimOverdueSql } from '../db/claim-overdue';
import { chargeRunsSql } from '../credits/charge';
import { ASYNC_COMMIT_COLUMN } from '../db/async-commit';
import { eventBatchJson, type PendingRunEvent } from './events/log';
import { finishedCreditsSql } from '../credits/finished-credits';
import { JOURNAL_JSON_SQL, type StepRow } from './journal-rows';
import type { RunError, RunState } from '../domain/runs';
import type { MetricExpression } from '../models/CircuitMetric';
import type { CircuitDefinition } from '../domain/definition';

/**
 * Every state change of a run is one guarded UPDATE here, so a state never goes backwards
 * and a terminal state never changes:
 *   PROVISIONED → RUNNING            claimRun (also re-claims a RUNNING run whose worker went silent)
 *   RUNNING → COMPLETED | EXCEPTION  finishRuns, only by the attempt that holds the run, charging
 *                                    credits in the same transaction
 */

export interface ClaimedRun {
  uid: string;
  user_uid: string;
  circuit_uid: string;
  circuit_version_uid: string;
  input: Record<string, unknown>;
  /** 1 on the first claim (the run just left PROVISIONED); higher when taken over from a dead worker. */
  attempt: number;
  /** When the run must have ended (DeadlineExceeded past it); null for runs from before deadlines. */
  deadline_at: Date | null;
  created_at: Date;
  /** Set when its owner asked to cancel it. */
  cancel_requested_at: Date | null;
  /** The version's definition (null if the version is gone) and the circuit's metric expressions. */
  definition: CircuitDefinition | null;
  metrics: MetricExpression[] | null;
  /** The events the run's webhook wants (null: no webhook), for the run hooks. */
  webhook_events: string[] | null;
  /** Attempts that stopping workers gave back unfinished (not counted by poison containment). */
  handed_back: number;
  /** Set while an approval step holds the run: its deadline is paused. */
  paused_at: Date | null;
  /** What earlier attempts journaled (attempt > 1; null on a first attempt). */
  journal?: StepRow[] | null;
  /** The run this one replays and how; the query's "cache": "bypass". */
  replay_of?: string | null;
  replay_mode?: 'recorded' | 'live' | null;
  cache_bypass?: boolean;
  /** The trace context the run's span continues (null: a trace of its own, or traces off). */
  traceparent?: string | null;
  /** What the run holds when claimed and its spend cap (null: none). */
  credits_held?: string | number;
  max_credits?: string | number | null;
  /** Its concurrency key's slot (docs/runs.md, Concurrency keys); null without one. */
  concurrency_key?: string | null;
}

/** Who claims: shown in `circuit_runs.worker`, and the backend pid of its presence connection (see migration 0005). */
export interface WorkerIdentity {
  name: string;
  backendPid: number | null;
}

/**
 * A run is executed at most this many times in all while its executions stop their workers (attempts are counted
 * at claim, before executing); the claim after the last such loss ends it WorkerLost. Attempts a stopping worker
 * gave back (`handed_back`: a park, a restart) are not losses.
 */
export const MAX_WORKER_LOSSES = 3;

/** How many of a claimed run's earlier attempts ended with their worker gone. */
export function workerLosses(claim: Pick<ClaimedRun, 'attempt' | 'handed_back'>): number {
  return claim.attempt - 1 - Number(claim.handed_back ?? 0);
}

/** The claimed attempt is the run's last (LAST_ATTEMPT_SQL, seen from the claim). */
export function isLastAttempt(claim: Pick<ClaimedRun, 'attempt' | 'handed_back'>): boolean {
  return workerLosses(claim) === MAX_WORKER_LOSSES - 1;
}

/** The most runs one claim statement takes (a worker claims at most its JOB_CONCURRENCY at a time). */
const MAX_CLAIM_BATCH = 50;

/**
 * Fair shares (docs/fairness.md): how many more runs the claiming worker takes, judged when the claim
 * statement is sent. `userMax` is USER_MAX_CONCURRENT_RUNS (counted in user_run_slots, across workers);
 * `room` what this worker has free; `userRoom` what each user already holding runs here may still take
 * (others: `shareMax`). PROVISIONED runs beyond any of these stay PROVISIONED, marked `slot_wait`.
 */
export interface ClaimRoom {
  userMax: number;
  room: number;
  shareMax: number;
  userRoom: Map<string, number>;
  /**
   * How many runs on their last attempt (LAST_ATTEMPT_SQL) this worker may take: 1 while it executes none, else 0.
   * A run that stopped its worker twice gets its last attempt beside no other such run, so a poison run's last
   * attempt cannot take with it a run that was only its neighbour in the two workers it killed before.
   */
  lastAttempts: number;
}

/** What a claiming worker tells the claim statement: its room now, and the runs it just claimed. */
export interface ClaimFairness {
  room(): ClaimRoom;
  /** Called with each statement's claims before the next statement is sent (so room is never counted twice). */
  claimed(runs: readonly ClaimedRun[]): void;
}

interface ClaimSettings {
  staleAfterMs: number;
  notifyChannel?: string;
  worker: WorkerIdentity;
  fairness?: ClaimFairness;
}

/** Claims made while another is being written, gathered for the next statement (one per process: RunService.claims). */
export type ClaimBatcher = StatementBatcher<{ uid: string; settings: ClaimSettings }, ClaimedRun | null>;

export function createClaimBatcher(sequelize: Sequelize): ClaimBatcher {
  return new StatementBatcher(
    async (_key, items) => {
      const claimed = await claimRuns(sequelize, [...new Set(items.map((item) => item.uid))], items[0].settings);
      items[0].settings.fairness?.claimed([...claimed.values()]);
      // A run asked for twice in one batch (delivered twice) is claimed once: the second asker gets
      // null, as it would from a statement of its own after the first.
      return items.map((item) => {
        const claim = claimed.get(item.uid) ?? null;
        claimed.delete(item.uid);
        return claim;
      });
    },
    { maxItems: MAX_CLAIM_BATCH },
  );
}

/**
 * PROVISIONED → RUNNING, or takes over a RUNNING run whose heartbeat is older than `staleAfterMs`
 * AND whose worker is gone (its presence connection's backend no longer exists): a worker that is
 * alive but late to heartbeat keeps its run. The attempt is counted here, before executing, so a run
 * that kills its workers runs out of attempts. Returns what executing needs in the same round trip;
 * null when the run is not claimable (terminal, or held by a live worker).
 * Claims made while another is being written go together in the next statement (StatementBatcher):
 * each row is judged on its own by the same guarded UPDATE.
 */
export function claimRun(
  claims: ClaimBatcher,
  uid: string,
  staleAfterMs: number,
  notifyChannel?: string,
  worker: WorkerIdentity = { name: 'unknown', backendPid: null },
  fairness?: ClaimFairness,
): Promise<ClaimedRun | null> {
  const key = JSON.stringify([
    staleAfterMs,
    notifyChannel ?? null,
    worker.name,
    worker.backendPid,
    fairness ? 'fair' : '',
  ]);
  return claims.submit(key, { uid, settings: { staleAfterMs, notifyChannel, worker, fairness } });
}

/** Without a ClaimFairness: no limit but the database's (the tests' and tools' claims). */
const UNLIMITED: ClaimRoom = {
  userMax: 2 ** 31 - 1,
  room: 2 ** 31 - 1,
  shareMax: 2 ** 31 - 1,
  userRoom: new Map(),
  lastAttempts: 2 ** 31 - 1,
};

/**
 * A run whose next attempt is its last (`MAX_WORKER_LOSSES`): a RUNNING run that no worker holds has stopped its
 * worker once for every attempt that was not given back.
 */
const LAST_ATTEMPT_SQL = (run: string) =>
  `${run}.state = 'RUNNING' AND ${run}.attempt - ${run}.handed_back = ${MAX_WORKER_LOSSES - 1}`;

/**
 * The slot rows a statement takes slots in (docs/fairness.md): over a CTE `candidate(uid, user_uid,
 * concurrency_key, …)`, `slots(user_uid, running)` and `keys(key, running)`, each row locked in key order; a
 * user's running runs are `user_run_slots.claimed` minus `user_run_ends.ended`, a key's the same in
 * `run_key_slots`/`run_key_ends`. The ends rows are read without a lock: a claim that misses an end not yet
 * committed counts one run too many, never one too few.
 */
const SLOT_ROWS_CTES = `slots AS (
       SELECT s.user_uid, s.claimed - COALESCE(e.ended, 0) AS running
         FROM user_run_slots s LEFT JOIN user_run_ends e ON e.user_uid = s.user_uid
        WHERE s.user_uid IN (SELECT user_uid FROM candidate) ORDER BY s.user_uid FOR NO KEY UPDATE OF s),
     keys AS (
       SELECT k.key, k.claimed - COALESCE(e.ended, 0) AS running
         FROM run_key_slots k LEFT JOIN run_key_ends e ON e.key = k.key
        WHERE k.key IN (SELECT concurrency_key FROM candidate) ORDER BY k.key FOR NO KEY UPDATE OF k)`;

/** What taking slots adds to the rows SLOT_ROWS_CTES locked, over a CTE `took(user_uid, concurrency_key)`: one per run that took its slots. */
const SLOTS_TAKEN_CTES = `counted AS (
       UPDATE user_run_slots s SET claimed = s.claimed + b.n
         FROM (SELECT user_uid, count(*) AS n FROM took GROUP BY user_uid) b
        WHERE s.user_uid = b.user_uid),
     key_counted AS (
       UPDATE run_key_slots k SET claimed = k.claimed + b.n
         FROM (SELECT concurrency_key, count(*) AS n FROM took WHERE concurrency_key IS NOT NULL GROUP BY concurrency_key) b
        WHERE k.key = b.concurrency_key)`;

/**
 * A RUNNING run whose worker is gone or that no worker holds: its heartbeat stale or cleared (parked, given back),
 * and its presence backend gone. `$2` is staleAfterMs in seconds.
 */
const UNHELD = `(heartbeat_at IS NULL OR heartbeat_at < now() - make_interval(secs => $2))
                   AND (worker_backend_pid IS NULL OR NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = worker_backend_pid))`;

async function claimRuns(
  sequelize: Sequelize,
  uids: string[],
  { staleAfterMs, notifyChannel, worker, fairness }: ClaimSettings,
): Promise<Map<string, ClaimedRun>> {
  const room = fairness?.room() ?? UNLIMITED;
  // Candidates for slots: PROVISIONED runs, and paused RUNNING runs that no worker holds and that wait on nothing
  // any more (a resolved wait: they resume, docs/fairness.md, Key slots). A run of a concurrency key (docs/runs.md,
  // Concurrency keys) is taken only while it is among the key's first candidates here (oldest first) that its key's
  // free slots cover: the key's slots row is locked and counts what is claimed, as the user's is. Then a run is taken
  // when its user's nth candidate here (by priority, then age: a user's own order, docs/runs.md, Priority) fits the
  // user's slots (the slots row is locked and counts what is claimed, so workers claiming together count each
  // other's claims), the user's share of this worker and, in the order that interleaves users (each user's first,
  // then each one's second, …), the worker's room. The rest wait, marked slot_wait, until a slot frees
  // (wakeWaitingRuns). A resumed run taken ends its pause here (its deadline moves on by the pause). Other RUNNING
  // runs that no worker holds are taken over as they are: they hold their slots, or wait on something still.
  const rows = await retryDeadlock(() =>
    preparedQuery<ClaimedRun>(
      sequelize,
      `WITH deferred AS (
       SELECT r.uid FROM circuit_runs r
        WHERE r.uid = ANY($1::uuid[]) AND ${LAST_ATTEMPT_SQL('r')}
        ORDER BY r.created_at, r.uid OFFSET $10),
     candidate AS (
       SELECT r.uid, r.user_uid, r.created_at, r.priority, r.concurrency_key, r.concurrency_limit
         FROM circuit_runs r
        WHERE r.uid = ANY($1::uuid[]) AND r.parked_at IS NULL AND r.uid NOT IN (SELECT uid FROM deferred)
          AND (r.state = 'PROVISIONED'
               OR (r.state = 'RUNNING' AND r.paused_at IS NOT NULL AND ${UNHELD}
                   AND NOT EXISTS (SELECT 1 FROM circuit_run_steps w
                                    WHERE w.run_uid = r.uid AND w.status = 'waiting' AND w.expires_at > now())))),
     ${SLOT_ROWS_CTES},
     keyed AS (
       SELECT c.*, row_number() OVER (PARTITION BY c.concurrency_key ORDER BY c.created_at, c.uid) AS kn, COALESCE(keys.running, 0) AS key_running
         FROM candidate c LEFT JOIN keys ON keys.key = c.concurrency_key),
     share AS (
       SELECT * FROM unnest($8::uuid[], $9::int[]) AS s(user_uid, room)),
     ranked AS (
       SELECT c.uid, c.created_at, row_number() OVER (PARTITION BY c.user_uid ORDER BY c.priority DESC, c.created_at, c.uid) AS n,
              LEAST($5::int - COALESCE(slots.running, 0), COALESCE(share.room, $7::int)) AS fits
         FROM keyed c LEFT JOIN slots ON slots.user_uid = c.user_uid LEFT JOIN share ON share.user_uid = c.user_uid
        WHERE c.concurrency_key IS NULL OR c.key_running + c.kn <= c.concurrency_limit),
     taken AS (
       SELECT uid FROM ranked WHERE n <= fits ORDER BY n, created_at LIMIT GREATEST($6::int, 0)),
     waiting AS (
       UPDATE circuit_runs SET slot_wait = true
        WHERE uid IN (SELECT uid FROM candidate EXCEPT SELECT uid FROM taken) AND NOT slot_wait AND parked_at IS NULL
          AND (state = 'PROVISIONED' OR (state = 'RUNNING' AND paused_at IS NOT NULL AND ${UNHELD}))),
     claimed AS (
       UPDATE circuit_runs
          SET state = 'RUNNING', attempt = attempt + 1, heartbeat_at = now(), started_at = COALESCE(started_at, now()), updated_at = now(),
              worker = $3, worker_backend_pid = $4, slot_wait = false,
              deadline_at = CASE WHEN paused_at IS NOT NULL AND uid IN (SELECT uid FROM taken) THEN deadline_at + (now() - paused_at) ELSE deadline_at END,
              paused_at = CASE WHEN uid IN (SELECT uid FROM taken) THEN NULL ELSE paused_at END
        WHERE uid = ANY($1::uuid[]) AND parked_at IS NULL AND uid NOT IN (SELECT uid FROM deferred)
          AND ((uid IN (SELECT uid FROM taken)
                AND (state = 'PROVISIONED' OR (state = 'RUNNING' AND paused_at IS NOT NULL AND ${UNHELD})))
               OR (uid NOT IN (SELECT uid FROM candidate) AND state = 'RUNNING' AND ${UNHELD}))
        RETURNING uid, user_uid, circuit_uid, circuit_version_uid, input, attempt, deadline_at, created_at, cancel_requested_at, webhook_events, handed_back, paused_at, replay_of, replay_mode, cache_bypass, traceparent, credits_held, max_credits, concurrency_key, ${ASYNC_COMMIT_COLUMN}),
     took AS (
       SELECT user_uid, concurrency_key FROM claimed WHERE uid IN (SELECT uid FROM taken)),
     ${SLOTS_TAKEN_CTES}
     SELECT claimed.*, v.definition, m.metrics,
            CASE WHEN claimed.attempt > 1 THEN ${JOURNAL_JSON_SQL('claimed.uid')} END AS journal${
              notifyChannel
                ? `,
            CASE WHEN claimed.attempt = 1 THEN pg_notify($11, json_build_object('uid', claimed.uid, 'state', 'RUNNING')::text) END AS notified`
                : ''
            }
       FROM claimed
       LEFT JOIN circuit_versions v ON v.uid = claimed.circuit_version_uid
       LEFT JOIN circuits c ON c.uid = claimed.circuit_uid
       LEFT JOIN circuit_metrics m ON m.uid = c.user_circuit_metric_uid`,
      [
        uids,
        staleAfterMs / 1000,
        worker.name,
        worker.backendPid,
        room.userMax,
        room.room,
        room.shareMax,
        [...room.userRoom.keys()],
        [...room.userRoom.values()],
        Math.max(0, room.lastAttempts),
        ...(notifyChannel ? [notifyChannel] : []),
      ],
    ),
  );
  return new Map(rows.map((row) => [row.uid, row]));
}

/** What resumeHeldRun did: the run resumed (`deadline`: its deadline now), was turned away for want of a slot, or neither. */
export type HeldResume = { resumed: Date } | 'turnedAway' | null;

/**
 * Ends the pause of a run this attempt holds, when one of its steps goes on (a wait of it resolved; others may still
 * wait): it takes its slots
 * back as a claim takes them (SLOT_ROWS_CTES: its user's USER_MAX_CONCURRENT_RUNS, `userMax`, and its concurrency
 * key's limit, the rows locked and counted), and its deadline moves on by the time it was paused. When a slot is
 * full the run is turned away instead: given back (no heartbeat, not counted as a crash) and marked slot_wait, to be
 * woken and claimed in turn with the runs waiting for a slot (the attempt must stop). Null when the run was not
 * paused, or when it is not this attempt's.
 */
export async function resumeHeldRun(
  sequelize: Sequelize,
  uid: string,
  attempt: number,
  userMax: number,
  defaultDeadlineSeconds: number,
): Promise<HeldResume> {
  const [row] = await retryDeadlock(() =>
    preparedQuery<{ deadline_at: Date | null; turned_away: boolean }>(
      sequelize,
      `WITH candidate AS (
       SELECT uid, user_uid, concurrency_key, concurrency_limit FROM circuit_runs
        WHERE uid = $1 AND attempt = $2 AND state = 'RUNNING' AND paused_at IS NOT NULL AND parked_at IS NULL),
     ${SLOT_ROWS_CTES},
     taken AS (
       SELECT c.uid FROM candidate c LEFT JOIN slots ON slots.user_uid = c.user_uid LEFT JOIN keys ON keys.key = c.concurrency_key
        WHERE COALESCE(slots.running, 0) < $3 AND (c.concurrency_key IS NULL OR COALESCE(keys.running, 0) < c.concurrency_limit)),
     resumed AS (
       UPDATE circuit_runs
          SET deadline_at = COALESCE(deadline_at, created_at + make_interval(secs => $4)) + (now() - paused_at), paused_at = NULL, updated_at = now()
        WHERE uid IN (SELECT uid FROM taken) AND attempt = $2 AND state = 'RUNNING' AND paused_at IS NOT NULL
        RETURNING user_uid, concurrency_key, deadline_at),
     turned_away AS (
       UPDATE circuit_runs
          SET slot_wait = true, heartbeat_at = NULL, worker_backend_pid = NULL, handed_back = handed_back + 1
        WHERE uid IN (SELECT uid FROM candidate EXCEPT SELECT uid FROM taken) AND attempt = $2 AND state = 'RUNNING' AND paused_at IS NOT NULL
        RETURNING uid),
     took AS (SELECT user_uid, concurrency_key FROM resumed),
     ${SLOTS_TAKEN_CTES}
     SELECT (SELECT deadline_at FROM resumed) AS deadline_at, EXISTS (SELECT 1 FROM turned_away) AS turned_away, ${ASYNC_COMMIT_COLUMN}`,
      [uid, attempt, userMax, defaultDeadlineSeconds],
    ),
  );
  if (row?.deadline_at) return { resumed: new Date(row.deadline_at) };
  return row?.turned_away ? 'turnedAway' : null;
}

/**
 * `query` again when PostgreSQL broke a deadlock by failing it (40P01): two claim statements lock the slot rows of
 * their users and keys, each in key order, but one claim's users and another's keys may still cross. A claim
 * changes nothing when it fails, so it is simply sent again (at most 3 times).
 */
async function retryDeadlock<T>(query: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await query();
    } catch (error) {
      if (attempt >= 3 || (error as { code?: unknown }).code !== '40P01') throw error;
    }
  }
}

/** A run this worker holds, as its heartbeat names it. */
export interface HeldAttempt {
  uid: string;
  attempt: number;
}

/**
 * Keeps every claim of one worker alive in one statement (a worker holds thousands of
 * runs), and writes its current presence backend on them (it changes when that connection is
 * re-made). Answers the runs still held by these attempts, with whether their owner asked to stop
 * them (a cancel message the worker missed); a run missing from the answer is no longer this worker's. A run
 * whose heartbeat was cleared (parked, given back, turned away for a slot) is not kept alive again by a heartbeat
 * sent before its attempt stopped: another worker may be about to claim it.
 */
export async function heartbeatRuns(
  sequelize: Sequelize,
  held: readonly HeldAttempt[],
  backendPid: number | null,
): Promise<Map<string, { cancel: boolean }>> {
  if (held.length === 0) return new Map();
  const rows = await preparedQuery<{ uid: string; cancel: boolean }>(
    sequelize,
    `UPDATE circuit_runs r SET heartbeat_at = now(), worker_backend_pid = COALESCE($3, r.worker_backend_pid)
       FROM unnest($1::uuid[], $2::int[]) AS h(uid, attempt)
      WHERE r.uid = h.uid AND r.attempt = h.attempt AND r.state = 'RUNNING' AND r.parked_at IS NULL AND r.heartbeat_at IS NOT NULL
      RETURNING r.uid, r.cancel_requested_at IS NOT NULL AS cancel, ${ASYNC_COMMIT_COLUMN}`,
    [held.map((h) => h.uid), held.map((h) => h.attempt), backendPid],
  );
  return new Map(rows.map((row) => [row.uid, { cancel: row.cancel }]));
}

/**
 * Parks a RUNNING run of this attempt whose steps in flight all wait (`waiting`: their paths): it holds
 * no worker, no heartbeat and no memory until `wake_at` (its earliest wait expiry) or until a signal or
 * decision unparks it (src/runs/wake.ts). Refused ('refused') when a wait was resolved meanwhile, a cancel
 * came, or the run is not this attempt's. A resolution committed while the park was written (which the
 * park's snapshot could not see) is caught by a second look, which wakes the run again ('woken').
 * The attempt is counted as given back, not as a crash.
 */
export async function parkRun(
  sequelize: Sequelize,
  uid: string,
  attempt: number,
  waiting: readonly string[],
): Promise<'parked' | 'woken' | 'refused'> {
  const parked = await preparedQuery<{ uid: string }>(
    sequelize,
    `UPDATE circuit_runs
        SET parked_at = now(), heartbeat_at = NULL, worker_backend_pid = NULL, handed_back = handed_back + 1, enqueued_at = NULL,
            wake_at = (SELECT min(expires_at) FROM circuit_run_steps WHERE run_uid = $1 AND status = 'waiting')
      WHERE uid = $1 AND attempt = $2 AND state = 'RUNNING' AND cancel_requested_at IS NULL AND paused_at IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM circuit_run_steps WHERE run_uid = $1 AND path = ANY($3::text[])
                          AND (status <> 'waiting' OR expires_at <= now()))
      RETURNING uid, ${ASYNC_COMMIT_COLUMN}`,
    [uid, attempt, [...waiting]],
  );
  if (parked.length === 0) return 'refused';
  const woken = await preparedQuery<{ uid: string }>(
    sequelize,
    `UPDATE circuit_runs SET parked_at = NULL, wake_at = NULL, enqueued_at = now()
      WHERE uid = $1 AND parked_at IS NOT NULL AND state = 'RUNNING'
        AND (cancel_requested_at IS NOT NULL
             OR EXISTS (SELECT 1 FROM circuit_run_steps WHERE run_uid = $1 AND path = ANY($2::text[]) AND status <> 'waiting'))
      RETURNING uid`,
    [uid, [...waiting]],
  );
  return woken.length > 0 ? 'woken' : 'parked';
}

/**
 * Parked runs whose time has come (a wait's expiry, a delayed start): at most `limit`, unparked in one
 * statement (SKIP LOCKED: two workers' sweeps wake each run once), and all of them join the runs waiting for a
 * slot (slot_wait) instead of being queued in due-time order: one user's thousands of timers or starts coming
 * due together cannot put another user's behind them in the job queue (wakeWaitingRuns interleaves users, and a
 * run resuming from a time wait takes its slots back in the claim like any other). Returns how many it woke.
 */
export async function wakeDueRuns(sequelize: Sequelize, limit = 1000): Promise<number> {
  const sql = claimOverdueSql(
    {
      table: 'circuit_runs',
      overdue: `parked_at IS NOT NULL AND wake_at <= now()`,
      orderBy: 'wake_at',
      set: `parked_at = NULL, wake_at = NULL, slot_wait = true, enqueued_at = NULL`,
    },
    '$1',
    'uid',
  );
  const rows = await preparedQuery<{ uid: string }>(sequelize, sql, [limit]);
  return rows.length;
}

/**
 * A stopping worker gives back the runs it still holds: each is claimable at once by any worker (no
 * heartbeat, no presence), and the attempt is not counted against poison containment. Returns the
 * runs given back, for their jobs to be queued again.
 */
export async function handBackRuns(sequelize: Sequelize, held: readonly HeldAttempt[]): Promise<string[]> {
  if (held.length === 0) return [];
  const rows = await preparedQuery<{ uid: string }>(
    sequelize,
    `UPDATE circuit_runs r SET heartbeat_at = NULL, worker_backend_pid = NULL, handed_back = r.handed_back + 1
       FROM unnest($1::uuid[], $2::int[]) AS h(uid, attempt)
      WHERE r.uid = h.uid AND r.attempt = h.attempt AND r.state = 'RUNNING'
      RETURNING r.uid`,
    [held.map((h) => h.uid), held.map((h) => h.attempt)],
  );
  return rows.map((row) => row.uid);
}

/**
 * RUNNING runs whose worker is gone (its presence backend no longer exists, or it never had one and
 * its heartbeat is older than `staleAfterMs`) and that were not queued again within `staleAfterMs`:
 * marked queued now and returned, for their jobs to be queued again. What makes a crashed worker's
 * runs move on within seconds, now that a run's job ends once the run is claimed. A run waiting for a slot
 * (slot_wait) is not orphaned: it is woken when a slot frees.
 */
export async function claimOrphanedRuns(sequelize: Sequelize, staleAfterMs: number, limit = 500): Promise<string[]> {
  return claimOverdue(
    sequelize,
    {
      table: 'circuit_runs',
      overdue: `state = 'RUNNING' AND parked_at IS NULL AND NOT slot_wait
           AND (heartbeat_at IS NULL OR heartbeat_at < now() - make_interval(secs => $1))
           AND (worker_backend_pid IS NULL OR NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = worker_backend_pid))
           AND (enqueued_at IS NULL OR enqueued_at < now() - make_interval(secs => $1))`,
      orderBy: 'created_at',
      set: 'enqueued_at = now()',
    },
    [staleAfterMs / 1000],
    limit,
  );
}

export interface RunEnding {
  uid: string;
  attempt: number;
  state: Extract<RunState, 'COMPLETED' | 'EXCEPTION'>;
  resultBlob?: unknown;
  metrics?: Record<string, unknown> | null;
  /** EXCEPTION: what the owner sees. */
  error?: RunError | null;
  /** EXCEPTION: the detail for the service log (may hold what the owner must not see). */
  failureReason?: string | null;
  /** What the run cost: 1 + its steps' credits. */
  cost: number;
  /** The request hashes of its steps (what a replay of it compares, src/runs/step-gate.ts), written in the same statement. */
  requests?: Record<string, string>;
  /** Step/output events not yet logged: written in the same statement, just before the terminal state event. */
  events?: readonly PendingRunEvent[];
}

export interface RunCharge {
  userUid: string;
  cost: number;
  amount: number;
  balanceAfter: number;
}

/** The statement that records a run's request hashes (merged with an earlier attempt's), over a CTE named `ended` with the run's `uid`. */
export const RECORD_REQUESTS_SQL = (
  ended: string,
  requests: string,
) => `INSERT INTO circuit_run_requests (run_uid, requests)
       SELECT ${ended}.uid, ${requests}::jsonb FROM ${ended} WHERE ${requests}::jsonb IS NOT NULL
       ON CONFLICT (run_uid) DO UPDATE SET requests = circuit_run_requests.requests || EXCLUDED.requests`;

/** An ending as the statement of finishRuns takes it: its JSON, serialised once (its length weighs the batch). */
interface SerialisedEnding {
  uid: string;
  cost: number;
  json: string;
}

function serialiseEnding(ending: RunEnding): SerialisedEnding {
  const fields = JSON.stringify({
    uid: ending.uid,
    attempt: ending.attempt,
    state: ending.state,
    result: ending.state === 'COMPLETED' ? JSON.stringify(ending.resultBlob ?? null) : null,
    metrics: ending.state === 'COMPLETED' && ending.metrics ? JSON.stringify(ending.metrics) : null,
    failure_reason: ending.failureReason ?? null,
    cost: ending.cost,
    error:
      ending.state === 'EXCEPTION'
        ? JSON.stringify(ending.error ?? { code: 'Internal', message: 'The run failed' })
        : null,
    requests: ending.requests && Object.keys(ending.requests).length > 0 ? JSON.stringify(ending.requests) : null,
  });
  return {
    uid: ending.uid,
    cost: ending.cost,
    json: `${fields.slice(0, -1)},"events":${eventBatchJson(ending.events ?? [])}}`,
  };
}

/**
 * RUNNING → COMPLETED | EXCEPTION for the attempt holding each run (or PROVISIONED → EXCEPTION, as
 * `attempt` 0, for a cancel or deadline before any claim), with its one charge, for many runs in one
 * statement, so one transaction (with `notifyChannel`, each state event too: NOTIFY is delivered on
 * commit). Each charge releases the run's credit hold and takes its cost (src/credits/charge.ts): the
 * user's row is locked once, and the runs of one user are charged one after the other in the order
 * given, each from the balance the previous left, exactly as a statement per run would. Answers each
 * ending, in order: its charge, or null when the run was not that attempt's to end.
 */
async function finishRuns(
  sequelize: Sequelize,
  endings: readonly SerialisedEnding[],
  notifyChannel?: string,
): Promise<Array<RunCharge | null>> {
  // The state trigger (migration 0013) numbers each terminal state event after the events logged here.
  const text = `WITH RECURSIVE batch AS (
       SELECT x.ord, b.*
         FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(value, ord),
              jsonb_to_record(x.value) AS b(uid uuid, attempt int, state text, result text, metrics text,
                failure_reason text, cost bigint, error text, requests text, events jsonb)),
     ended AS (
       UPDATE circuit_runs r
          SET state = b.state, ended_at = now(), updated_at = now(), heartbeat_at = NULL, parked_at = NULL, wake_at = NULL,
              result_blob = b.result::jsonb, metrics = b.metrics::jsonb, failure_reason = b.failure_reason,
              credits_cost = b.cost, error = b.error::jsonb, event_seq = r.event_seq + jsonb_array_length(b.events)
         FROM batch b
        WHERE r.uid = b.uid AND r.state IN ('PROVISIONED', 'RUNNING') AND r.attempt = b.attempt
        RETURNING r.uid, r.user_uid, r.credits_held AS held, r.event_seq, b.ord, b.cost, b.state, b.events, b.requests,
                  ${ASYNC_COMMIT_COLUMN}),
     logged AS (
       INSERT INTO circuit_run_events (run_uid, seq, kind, data)
       SELECT ended.uid, ended.event_seq - 1 - jsonb_array_length(ended.events) + e.ord, e.value->>'kind', e.value->'data'
         FROM ended, jsonb_array_elements(ended.events) WITH ORDINALITY AS e(value, ord)),
     requested AS (${RECORD_REQUESTS_SQL('ended', 'ended.requests')}),
     ${chargeRunsSql('ended')}
     SELECT c.run_uid AS uid, c.user_uid, c.amount, c.balance_after${
       notifyChannel
         ? `,
            pg_notify($2, json_build_object('uid', c.run_uid, 'state', ended.state)::text) AS notified`
         : ''
     }
       FROM charged_runs c JOIN ended ON ended.uid = c.run_uid`;
  type Charged = { uid: string; user_uid: string; amount: string; balance_after: string };
  const rows = await preparedQuery<Charged>(sequelize, text, [
    `[${endings.map((ending) => ending.json).join(',')}]`,
    ...(notifyChannel ? [notifyChannel] : []),
  ]);
  const charged = new Map(rows.map((row) => [row.uid, row]));
  return endings.map((ending) => {
    const row = charged.get(ending.uid);
    charged.delete(ending.uid);
    return row
      ? {
          userUid: row.user_uid,
          cost: ending.cost,
          amount: Number(row.amount),
          balanceAfter: Number(row.balance_after),
        }
      : null;
  });
}

/** Ends one run: finishRuns for one ending (what RunEnds does when nothing else is ending). */
export async function finishRun(
  sequelize: Sequelize,
  ending: RunEnding,
  notifyChannel?: string,
): Promise<RunCharge | null> {
  const [charge] = await finishRuns(sequelize, [serialiseEnding(ending)], notifyChannel);
  return charge;
}

/** Ends of runs arriving while another is written, gathered per user for the next statement (one per process: RunService.runEnds). */
export type RunEnds = StatementBatcher<SerialisedEnding, RunCharge | null>;

/** A batch stops before its endings' JSON passes this (one with a result of megabytes goes alone). */
const ENDS_MAX_BYTES = 1024 * 1024;

export function createRunEnds(sequelize: Sequelize, notifyChannel?: string): RunEnds {
  return new StatementBatcher(
    async (_key, items) => {
      // A run ended twice in one batch (never expected: one attempt ends it once) must not share a statement.
      const seen = new Set<string>();
      if (items.every((item) => !seen.has(item.uid) && seen.add(item.uid)))
        return finishRuns(sequelize, items, notifyChannel);
      const answers: Array<RunCharge | null> = [];
      for (const item of items) answers.push((await finishRuns(sequelize, [item], notifyChannel))[0]);
      return answers;
    },
    { maxItems: 100, weight: (item) => item.json.length, maxWeight: ENDS_MAX_BYTES },
  );
}

/**
 * Ends `ending`'s run with the runs of the same user ending meanwhile in this process (one statement, one lock
 * of the user's row for all of them); `userUid` unknown: alone.
 */
export function endRunTogether(ends: RunEnds, ending: RunEnding, userUid?: string): Promise<RunCharge | null> {
  return ends.submit(userUid ? `user:${userUid}` : `run:${ending.uid}`, serialiseEnding(ending));
}

/** A PROVISIONED run ended by finishProvisionedRuns: what was charged, and what its end's announcement needs. */
export interface EndedProvisionedRun {
  uid: string;
  attempt: number;
  amount: number;
  created_at: Date;
  webhook_events: string[] | null;
}

/**
 * PROVISIONED → EXCEPTION for many runs of one user at once (a cancel by filter, src/runs/bulk-runs.ts), each
 * fenced by its attempt as finishRun fences one, and charged `cost` (the base credit its hold covers) with its
 * own ledger row, in one statement: the user's row is locked once for all of them, where one finishRun per run
 * would queue each behind the last for that lock. With `notifyChannel`, each run's state event. Returns the runs
 * it ended; a run claimed or ended meanwhile is left out (the caller goes on with it as one cancel does).
 */
export async function finishProvisionedRuns(
  sequelize: Sequelize,
  userUid: string,
  runs: ReadonlyArray<{ uid: string; attempt: number }>,
  ending: { error: RunError; failureReason: string; cost: number },
  notifyChannel?: string,
): Promise<EndedProvisionedRun[]> {
  if (runs.length === 0) return [];
  // What a run pays is its cost within what it held: a PROVISIONED run holds its base credit from admission, so
  // each pays it out of its own hold, and the balance after each ledger row follows the runs' order.
  const rows = await preparedQuery<EndedProvisionedRun & { amount: string }>(
    sequelize,
    `WITH ended AS (
       UPDATE circuit_runs r
          SET state = 'EXCEPTION', ended_at = now(), updated_at = now(), heartbeat_at = NULL, parked_at = NULL, wake_at = NULL,
              failure_reason = $5, credits_cost = $6, error = $4::jsonb
         FROM unnest($2::uuid[], $3::int[]) AS m(uid, attempt)
        WHERE r.uid = m.uid AND r.attempt = m.attempt AND r.user_uid = $1 AND r.state = 'PROVISIONED'
        RETURNING r.uid, r.attempt, r.credits_held, r.created_at, r.webhook_events, ${ASYNC_COMMIT_COLUMN}),
     locked AS (
       SELECT uid, credits, credits_held FROM users WHERE uid = $1 AND EXISTS (SELECT 1 FROM ended) FOR UPDATE),
     priced AS (
       SELECT e.uid, e.attempt, e.created_at, e.webhook_events, e.credits_held AS held,
              GREATEST(LEAST($6::bigint, e.credits_held), 0) AS amount, l.credits
         FROM ended e CROSS JOIN locked l),
     charged AS (
       UPDATE users u SET credits = l.credits - t.amount, credits_held = GREATEST(l.credits_held - t.held, 0)
         FROM locked l, (SELECT sum(amount) AS amount, sum(held) AS held FROM priced) t
        WHERE u.uid = l.uid
        RETURNING u.uid),
     ledger AS (
       INSERT INTO credit_ledger (user_uid, kind, run_uid, cost, amount, balance_after)
       SELECT $1, 'run', p.uid, $6::bigint, -p.amount, p.credits - sum(p.amount) OVER (ORDER BY p.created_at, p.uid)
         FROM priced p)
     SELECT p.uid, p.attempt, p.amount, p.created_at, p.webhook_events${
       notifyChannel
         ? `,
            pg_notify($7, json_build_object('uid', p.uid, 'state', 'EXCEPTION')::text) AS notified`
         : ''
     }
       FROM priced p`,
    [
      userUid,
      runs.map((run) => run.uid),
      runs.map((run) => run.attempt),
      JSON.stringify(ending.error),
      ending.failureReason,
      ending.cost,
      ...(notifyChannel ? [notifyChannel] : []),
    ],
  );
  return rows.map((row) => ({ ...row, amount: Number(row.amount) }));
}

/**
 * Runs a sweeper should queue again: PROVISIONED runs never queued (the process died between insert
 * and enqueue), and runs stuck for `stuckAfterMs` (a lost job, or RUNNING with a silent worker).
 * Marks them queued now, so each is picked once per period. A parked run is neither: it is queued when it wakes.
 */
export async function claimRunsToRequeue(
  sequelize: Sequelize,
  graceMs: number,
  stuckAfterMs: number,
  limit = 100,
): Promise<string[]> {
  return claimOverdue(
    sequelize,
    {
      table: 'circuit_runs',
      overdue: `state IN ('PROVISIONED', 'RUNNING')
           AND ((state = 'PROVISIONED' AND enqueued_at IS NULL AND created_at < now() - make_interval(secs => $1))
             OR (COALESCE(enqueued_at, created_at) < now() - make_interval(secs => $2)
                 AND (state = 'PROVISIONED' OR heartbeat_at IS NULL OR heartbeat_at < now() - make_interval(secs => $2))))
           AND NOT slot_wait AND parked_at IS NULL`,
      orderBy: 'created_at',
      set: 'enqueued_at = now()',
    },
    [graceMs / 1000, stuckAfterMs / 1000],
    limit,
  );
}

/**
 * Runs that waited for a slot (slot_wait) and now fit their user's USER_MAX_CONCURRENT_RUNS: at most
 * `limit`, interleaving users (each user's first, then each one's second, …; users running the
 * fewest first; a user's own runs by priority, then oldest first: priority never moves one user ahead of another), skipping `skipUsers` (at their share of the waking worker). Marked queued and
 * returned, for their jobs to be queued again; a run woken beyond a slot is simply turned away again. A waiting run
 * is PROVISIONED, or RUNNING and paused: a run whose wait ended when its slot was taken (it resumes when claimed).
 */
export async function wakeWaitingRuns(
  sequelize: Sequelize,
  userMax: number,
  limit: number,
  skipUsers: readonly string[],
): Promise<string[]> {
  if (limit <= 0) return [];
  // A run of a concurrency key is considered only while it is among its key's oldest waiting runs that the key's
  // free slots cover (the runs of a full key are left out before they are ranked); a user's rank counts only
  // those, so one key's backlog never holds back a user's other runs.
  const rows = await preparedQuery<{ uid: string }>(
    sequelize,
    `UPDATE circuit_runs r SET slot_wait = false, enqueued_at = now()
      WHERE r.uid IN (
        SELECT w.uid FROM (
          SELECT f.uid, f.created_at, f.running,
                 row_number() OVER (PARTITION BY f.user_uid ORDER BY f.priority DESC, f.created_at, f.uid) AS n
            FROM (
              SELECT c.uid, c.user_uid, c.created_at, c.priority, c.concurrency_key, c.concurrency_limit,
                     s.claimed - COALESCE(e.ended, 0) AS running,
                     COALESCE(ks.claimed - COALESCE(ke.ended, 0), 0) AS key_running,
                     row_number() OVER (PARTITION BY c.concurrency_key ORDER BY c.created_at, c.uid) AS kn
                FROM circuit_runs c JOIN user_run_slots s ON s.user_uid = c.user_uid LEFT JOIN user_run_ends e ON e.user_uid = c.user_uid
                LEFT JOIN run_key_slots ks ON ks.key = c.concurrency_key LEFT JOIN run_key_ends ke ON ke.key = c.concurrency_key
               WHERE c.slot_wait AND c.state IN ('PROVISIONED', 'RUNNING') AND c.user_uid <> ALL($3::uuid[])
                 AND (c.concurrency_key IS NULL OR COALESCE(ks.claimed - COALESCE(ke.ended, 0), 0) < c.concurrency_limit)) f
           WHERE f.concurrency_key IS NULL OR f.key_running + f.kn <= f.concurrency_limit) w
         WHERE w.running + w.n <= $1
         ORDER BY w.n, w.running, w.created_at
         LIMIT $2)
        AND r.slot_wait AND r.state IN ('PROVISIONED', 'RUNNING')
      RETURNING r.uid`,
    [userMax, limit, skipUsers],
  );
  return rows.map((row) => row.uid);
}

/**
 * Deletes the slot rows of concurrency keys with no run in flight and no slot held, that the end of their last run
 * left because a claim statement held the key's slots row at that instant (it never waits for one; migration 0036).
 * Both rows are locked first, skipping any another statement holds: under those locks no run of the key can be
 * admitted or claimed, so `in_flight` 0 is the truth. Run by the run sweep; returns how many keys lost their rows.
 */
export async function deleteIdleKeyRows(sequelize: Sequelize, limit = 1000): Promise<number> {
  const rows = await preparedQuery<{ key: string }>(
    sequelize,
    `WITH idle AS (
       SELECT e.key FROM run_key_ends e JOIN run_key_slots s ON s.key = e.key
        WHERE e.in_flight <= 0 AND s.claimed = e.ended
        LIMIT $1 FOR UPDATE OF e, s SKIP LOCKED),
     slots AS (DELETE FROM run_key_slots WHERE key IN (SELECT key FROM idle))
     DELETE FROM run_key_ends WHERE key IN (SELECT key FROM idle) RETURNING key`,
    [limit],
  );
  return rows.length;
}

/** After a failed enqueue: the sweeper queues runs with no enqueued_at once their grace period passes. */
export async function markNotEnqueued(sequelize: Sequelize, uid: string): Promise<void> {
  await sequelize.query(`UPDATE circuit_runs SET enqueued_at = NULL WHERE uid = $1 AND state = 'PROVISIONED'`, {
    bind: [uid],
  });
}

export interface OverdueRun {
  uid: string;
  state: RunState;
  attempt: number;
  /** What its journal says finished (finishedCreditsSql): what ending it charges beyond the base. */
  credits: number;
}

/**
 * Runs past their deadline that no live worker will end: PROVISIONED ones, and RUNNING ones whose
 * worker stopped heartbeating for `staleAfterMs` or that are `hungAfterMs` past the deadline.
 * The sweeper ends each EXCEPTION DeadlineExceeded through finishRun (fenced by `attempt`), charging what its
 * journal says finished. A parked run is left to the sweep that wakes it.
 */
export async function findOverdueRuns(
  sequelize: Sequelize,
  defaultDeadlineSeconds: number,
  staleAfterMs: number,
  hungAfterMs: number,
  limit = 100,
): Promise<OverdueRun[]> {
  const rows = await sequelize.query<Omit<OverdueRun, 'credits'> & { credits: string }>(
    `SELECT uid, state, attempt, ${finishedCreditsSql('circuit_runs.uid')} AS credits FROM circuit_runs
      WHERE state IN ('PROVISIONED', 'RUNNING')
        AND COALESCE(deadline_at, created_at + make_interval(secs => $1)) < now()
        AND paused_at IS NULL AND parked_at IS NULL
        AND (state = 'PROVISIONED'
             OR heartbeat_at IS NULL OR heartbeat_at < now() - make_interval(secs => $2)
             OR COALESCE(deadline_at, created_at + make_interval(secs => $1)) < now() - make_interval(secs => $3))
      ORDER BY created_at
      LIMIT $4`,
    { bind: [defaultDeadlineSeconds, staleAfterMs / 1000, hungAfterMs / 1000, limit], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ ...row, credits: Number(row.credits) }));
}

/**
 * Marks a run's cancel request. Returns its state and attempt when it was still in
 * flight (then the caller ends a PROVISIONED run at once or tells the worker), null when terminal.
 */
export async function requestRunCancel(
  sequelize: Sequelize,
  uid: string,
): Promise<{ state: RunState; attempt: number } | null> {
  const rows = await sequelize.query<{ state: RunState; attempt: number }>(
    `UPDATE circuit_runs SET cancel_requested_at = COALESCE(cancel_requested_at, now())
      WHERE uid = $1 AND state IN ('PROVISIONED', 'RUNNING') RETURNING state, attempt`,
    { bind: [uid], type: QueryTypes.SELECT },
  );
  return rows[0] ?? null;
}

/**
 * Marks the cancel request of each of `uids` still in flight and the user's (a bulk cancel, src/runs/bulk-runs.ts),
 * in one statement: their state and attempt when marked (for stopCanceledRun), and whether this statement asked
 * first (`fresh`; a run asked before keeps its first request's time).
 */
export async function requestRunsCancel(
  sequelize: Sequelize,
  userUid: string,
  uids: readonly string[],
): Promise<Array<{ uid: string; state: RunState; attempt: number; fresh: boolean }>> {
  if (uids.length === 0) return [];
  return sequelize.query<{ uid: string; state: RunState; attempt: number; fresh: boolean }>(
    `UPDATE circuit_runs SET cancel_requested_at = COALESCE(cancel_requested_at, now())
      WHERE uid = ANY($1::uuid[]) AND user_uid = $2 AND state IN ('PROVISIONED', 'RUNNING')
      RETURNING uid, state, attempt, cancel_requested_at = now() AS fresh`,
    { bind: [uids, userUid], type: QueryTypes.SELECT },
  );
}

/**
 * The attempt of a RUNNING run that no worker holds (its worker is gone, it is parked, or it waits for a slot to resume), with the credits
 * of its finished steps (what ending it still charges), else null.
 */
export async function abandonedAttempt(
  sequelize: Sequelize,
  uid: string,
): Promise<{ attempt: number; credits: number } | null> {
  const rows = await sequelize.query<{ attempt: number; credits: string }>(
    `SELECT attempt, ${finishedCreditsSql('$1')} AS credits
       FROM circuit_runs
      WHERE uid = $1 AND state = 'RUNNING'
        AND (parked_at IS NOT NULL OR slot_wait
             OR (worker_backend_pid IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = worker_backend_pid)))`,
    { bind: [uid], type: QueryTypes.SELECT },
  );
  return rows[0] ? { attempt: rows[0].attempt, credits: Number(rows[0].credits) } : null;
}
