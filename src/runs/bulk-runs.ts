import crypto from 'node:crypto';
import { Op, QueryTypes, type Transaction, type WhereOptions } from 'sequelize';
import { Circuit, type User } from '../models';
import { CircuitRun } from '../models/CircuitRun';
import { MAX_BULK_RUNS, type RunState } from '../domain/runs';
import { badInput, conflict, idempotencyKeyReused } from '../errors';
import { authorize } from '../policies/authorize';
import { runsWhere, startRunPermits } from '../policies/run.policy';
import { tokenMaySubmitBatch } from '../policies/token.policy';
import type { RunDeps } from './ports';
import { inStates, myRunsWhere, type MyRunsFilter } from './my-runs';
import { finishProvisionedRuns, requestRunsCancel } from './transitions';
import { abortedError, failedEnding } from './execute';
import { stopCanceledRun } from './cancel';
import { admitReplays } from './admission';
import { REPLAY_MODES, type ReplayMode } from './replay';
import { IDEMPOTENCY_WINDOW_HOURS, checkIdempotencyKey } from './create-run';

export { MAX_BULK_RUNS };
/** How many runs a bulk cancel stops at once, and how many it marks per statement. */
const STOP_CONCURRENCY = 16;
const MARK_CHUNK = 1_000;
/** A key whose action never wrote its answer (its process died) is taken over after this long. */
const STALE_KEY_MS = 10 * 60_000;

/** What a bulk cancel answers: `matched` runs of the filter in flight, `canceled` those this call asked to stop. */
export interface BulkCancelResult {
  matched: number;
  canceled: number;
  /** True when more than MAX_BULK_RUNS matched: the call acted on the oldest MAX_BULK_RUNS. */
  truncated: boolean;
}

/** What a bulk replay answers: `matched` ended runs of the filter, `replayed` those replayed in the batch `batch_uid` (null: none). */
export interface BulkReplayResult {
  matched: number;
  replayed: number;
  batch_uid: string | null;
  truncated: boolean;
}

/** The filter of a bulk action, and the runs of it in `states` the caller may act on (the run policy's rule). */
function bulkWhere(viewer: User, filter: MyRunsFilter, action: 'cancel' | 'replay', states: RunState[]): WhereOptions {
  return inStates({ [Op.and]: [runsWhere(viewer, action), myRunsWhere(viewer.uid, filter, 'filter.')] }, states);
}

/** How many runs match, and the oldest MAX_BULK_RUNS of them. */
async function matching(where: WhereOptions): Promise<{ matched: number; uids: string[] }> {
  const matched = await CircuitRun.count({ where });
  if (matched === 0) return { matched, uids: [] };
  const rows = await CircuitRun.findAll({
    where,
    attributes: ['uid'],
    order: [
      ['created_at', 'ASC'],
      ['uid', 'ASC'],
    ],
    limit: MAX_BULK_RUNS,
  });
  return { matched, uids: rows.map((row) => row.uid) };
}

/** A filter as one canonical value (the same filter sent twice hashes alike, whatever its key order). */
function canonicalFilter(filter: MyRunsFilter): unknown[] {
  const date = (value: Date | string | null | undefined) =>
    value == null ? null : value instanceof Date ? value.toISOString() : value;
  const metadata = filter.metadata
    ? Object.entries(filter.metadata).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    : null;
  return [
    filter.state ?? null,
    filter.circuitUid ?? null,
    filter.batchUid ?? null,
    filter.tag ?? null,
    metadata,
    date(filter.createdAfter),
    date(filter.createdBefore),
  ];
}

function requestHash(action: string, ...parts: unknown[]): string {
  return crypto
    .createHash('sha256')
    .update(JSON.stringify([action, ...parts]))
    .digest('hex');
}

/**
 * Runs `act` once per caller and Idempotency-Key (docs/runs.md, Idempotency): the key is claimed first (a row
 * without an answer), so a retry while the action runs is 409 Conflict, and a retry after it is answered what
 * the first call was; the same key with another request is 422 IdempotencyKeyReused. `act` writes its answer with `remember`,
 * in its own transaction when it has one. A failed action frees its key.
 */
async function idempotent<T extends object>(
  deps: RunDeps,
  viewer: User,
  key: string | null | undefined,
  hash: string,
  act: (remember: (answer: T, transaction?: Transaction) => Promise<void>) => Promise<T>,
): Promise<T> {
  if (key == null) return act(async () => {});
  checkIdempotencyKey(key);
  const { sequelize } = deps;
  // Claim the key: a new one, one expired, or one whose action died before answering.
  const claimed = await sequelize.query<{ key: string }>(
    `INSERT INTO idempotency_keys (user_uid, key, request_hash, run_uid, answer, created_at)
     VALUES ($1, $2, $3, NULL, NULL, now())
     ON CONFLICT (user_uid, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, run_uid = NULL, answer = NULL, created_at = now()
      WHERE idempotency_keys.created_at < now() - make_interval(hours => $4)
         OR (idempotency_keys.answer IS NULL AND idempotency_keys.run_uid IS NULL
             AND idempotency_keys.request_hash = EXCLUDED.request_hash AND idempotency_keys.created_at < now() - make_interval(secs => $5))
     RETURNING key`,
    { bind: [viewer.uid, key, hash, IDEMPOTENCY_WINDOW_HOURS, STALE_KEY_MS / 1000], type: QueryTypes.SELECT },
  );
  if (claimed.length === 0) {
    const [record] = await sequelize.query<{ request_hash: string; answer: T | null }>(
      'SELECT request_hash, answer FROM idempotency_keys WHERE user_uid = $1 AND key = $2',
      { bind: [viewer.uid, key], type: QueryTypes.SELECT },
    );
    if (!record || record.request_hash !== hash) throw idempotencyKeyReused();
    if (record.answer === null)
      throw conflict('A request with this Idempotency-Key is still being processed; retry once it has been answered');
    return record.answer;
  }
  const remember = async (answer: T, transaction?: Transaction) => {
    await sequelize.query('UPDATE idempotency_keys SET answer = $3::jsonb WHERE user_uid = $1 AND key = $2', {
      bind: [viewer.uid, key, JSON.stringify(answer)],
      transaction,
    });
  };
  try {
    return await act(remember);
  } catch (error) {
    await sequelize
      .query('DELETE FROM idempotency_keys WHERE user_uid = $1 AND key = $2 AND answer IS NULL', {
        bind: [viewer.uid, key],
      })
      .catch(() => {});
    throw error;
  }
}

/**
 * Ends PROVISIONED runs of one user EXCEPTION Canceled, MARK_CHUNK per statement (finishProvisionedRuns), and
 * announces each end as endRun does (webhooks, metrics); the uids of those it ended.
 */
async function endProvisioned(
  deps: RunDeps,
  userUid: string,
  runs: ReadonlyArray<{ uid: string; attempt: number }>,
): Promise<Set<string>> {
  const ended = new Set<string>();
  const error = abortedError('Canceled');
  const ending = failedEnding({ uid: '', attempt: 0 }, error);
  for (let i = 0; i < runs.length; i += MARK_CHUNK) {
    const rows = await finishProvisionedRuns(
      deps.sequelize,
      userUid,
      runs.slice(i, i + MARK_CHUNK),
      { error, failureReason: ending.failureReason!, cost: ending.cost },
      deps.bus.sqlChannel,
    );
    for (const row of rows) {
      ended.add(row.uid);
      deps.lifecycle.emit('ended', {
        run: { uid: row.uid, user_uid: userUid, webhook_events: row.webhook_events },
        state: 'EXCEPTION',
        attempt: row.attempt,
        error,
        charged: row.amount,
        createdAt: row.created_at,
      });
      if (!deps.bus.sqlChannel)
        await deps.bus
          .publish({ uid: row.uid, state: 'EXCEPTION' })
          .catch((err: unknown) => deps.log.warn({ err, run: row.uid }, 'could not publish run state'));
    }
    if (rows.length > 0) deps.log.info({ runs: rows.length, user: userUid }, 'runs canceled by filter');
  }
  return ended;
}

/**
 * POST /users/circuit-runs/cancel (docs/runs.md, Cancel and replay by filter): every run of the caller's filter
 * still PROVISIONED or RUNNING, the oldest MAX_BULK_RUNS of a larger match, is asked to stop as
 * POST /circuit-runs/{uid}/cancel asks one (stopCanceledRun): a PROVISIONED one ends at once, a RUNNING one is told
 * over the bus. Only the caller's own runs are read, whatever the filter says.
 */
export async function cancelRunsByFilter(
  deps: RunDeps,
  viewer: User,
  filter: MyRunsFilter,
  idempotencyKey?: string | null,
): Promise<BulkCancelResult> {
  const where = bulkWhere(viewer, filter, 'cancel', ['PROVISIONED', 'RUNNING']);
  return idempotent(deps, viewer, idempotencyKey, requestHash('cancel', canonicalFilter(filter)), async (remember) => {
    const { matched, uids } = await matching(where);
    let canceled = 0;
    const marked: Array<{ uid: string; state: RunState; attempt: number }> = [];
    for (let i = 0; i < uids.length; i += MARK_CHUNK) {
      for (const run of await requestRunsCancel(deps.sequelize, viewer.uid, uids.slice(i, i + MARK_CHUNK))) {
        marked.push(run);
        if (run.fresh) canceled++;
      }
    }
    // PROVISIONED ones end here together; the rest (RUNNING, or claimed meanwhile) one by one, as one cancel does.
    const ended = await endProvisioned(
      deps,
      viewer.uid,
      marked.filter((run) => run.state === 'PROVISIONED'),
    );
    const rest = marked.filter((run) => !ended.has(run.uid));
    const next = { i: 0 };
    const stopOne = async (): Promise<void> => {
      while (next.i < rest.length) {
        const run = rest[next.i++];
        await stopCanceledRun(deps, run.uid, run, 0);
      }
    };
    await Promise.all(Array.from({ length: Math.min(STOP_CONCURRENCY, rest.length) }, stopOne));
    const answer = { matched, canceled, truncated: matched > MAX_BULK_RUNS };
    await remember(answer);
    return answer;
  });
}

/**
 * POST /users/circuit-runs/replay: every ended run of the caller's filter (the oldest MAX_BULK_RUNS of a larger
 * match) is replayed as POST /circuit-runs/{uid}/replay would (its version, its input, `mode`), the replays forming
 * one batch admitted in one statement (admitReplays). The caller must still be allowed to run each circuit.
 */
export async function replayRunsByFilter(
  deps: RunDeps,
  viewer: User,
  filter: MyRunsFilter,
  modeArg: string | null | undefined,
  idempotencyKey?: string | null,
): Promise<BulkReplayResult> {
  const mode = (modeArg ?? 'recorded') as ReplayMode;
  if (!(REPLAY_MODES as readonly string[]).includes(mode))
    throw badInput('mode must be recorded or live', { field: 'mode' });
  const where = bulkWhere(viewer, filter, 'replay', ['COMPLETED', 'EXCEPTION']);
  const batchPermit = tokenMaySubmitBatch(viewer);
  authorize(viewer, batchPermit.allowed, batchPermit.message);
  const hash = requestHash('replay', canonicalFilter(filter), mode);
  return idempotent(deps, viewer, idempotencyKey, hash, async (remember) => {
    const { matched, uids } = await matching(where);
    const truncated = matched > MAX_BULK_RUNS;
    if (uids.length === 0) {
      const none = { matched, replayed: 0, batch_uid: null, truncated };
      await remember(none);
      return none;
    }
    const circuitUids = (
      await CircuitRun.findAll({
        where: { uid: uids },
        attributes: ['circuit_uid'],
        group: ['circuit_uid'],
        raw: true,
      })
    ).map((row) => row.circuit_uid);
    const circuits = await Circuit.findAll({ where: { uid: circuitUids } });
    for (const circuit of circuits) {
      const permit = startRunPermits(viewer, circuit, false);
      authorize(viewer, permit.allowed, `${permit.message ?? 'Not allowed'} (circuit ${circuit.uid})`);
    }
    const uid = crypto.randomUUID();
    const admission = await deps.sequelize.transaction(async (transaction) => {
      const admitted = await admitReplays(
        { sequelize: deps.sequelize, runQueue: deps.queue },
        {
          uid,
          circuitUid: circuitUids.length === 1 ? circuitUids[0] : null,
          sources: uids,
          draft: {
            user_uid: viewer.uid,
            is_public: false,
            webhook_url: null,
            webhook_events: null,
            deadline_s: deps.config.runDeadlineSeconds,
            alias: null,
            replay_mode: mode,
          },
        },
        transaction,
      );
      await remember(
        { matched, replayed: admitted.admitted + admitted.refused, batch_uid: uid, truncated },
        transaction,
      );
      return admitted;
    });
    if (!deps.queue.sqlEnqueue) for (const runUid of admission.run_uids) await deps.queue.enqueue(runUid);
    for (const runUid of admission.run_uids)
      deps.lifecycle.emit('created', { run: { uid: runUid, user_uid: viewer.uid, webhook_events: null } });
    return { matched, replayed: admission.admitted + admission.refused, batch_uid: uid, truncated };
  });
}
