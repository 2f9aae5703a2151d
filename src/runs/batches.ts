import crypto from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { User } from '../models';
import { CircuitRun, type RunDraftArgs } from '../models/CircuitRun';
import { RUN_STATES, type RunState } from '../domain/runs';
import { badInput, notFound } from '../errors';
import { authorize } from '../policies/authorize';
import { tokenMaySubmitBatch } from '../policies/token.policy';
import { batchPermits, type BatchAction } from '../policies/batch.policy';
import { isUid } from '../ids';
import { checkInput, type CompiledSchemas } from '../engine/input-schema';
import { parseRunWebhook } from './run-webhook';
import { versionOfAlias } from '../aliases/alias-version';
import { preparedQuery } from '../db/prepared';
import type { RunDeps } from './ports';
import { circuitToStart, draftArgs, resolveVersion } from './create-run';
import { cancelRun } from './cancel';
import { admitBatch } from './admission';
import { concurrencySlotKey } from './flow-keys';
import type { RunStartArgs } from './delayed-start';

/** A batch holds 1 to this many inputs. */
export const MAX_BATCH_INPUTS = 1000;
/** How many of a batch's runs a cancel works on at once. */
const CANCEL_CONCURRENCY = 16;

/**
 * What a batch sends; the draft columns a caller sends (tags, metadata, max_credits, …) and a delayed
 * start (start_at or delay_s) as for a query (RunDraftArgs, RunStartArgs), common to all its runs.
 */
export interface CreateBatchInput extends RunDraftArgs, RunStartArgs {
  adaptorUid: string;
  versionUid?: string | null;
  alias?: string | null;
  inputs: unknown;
  isPublic?: boolean | null;
  webhook?: string | null;
  webhookEventsFilter?: string[] | null;
}

export interface BatchRow {
  uid: string;
  user_uid: string;
  /** Null for a replay by filter of runs of several circuits (src/runs/bulk-runs.ts). */
  circuit_uid: string | null;
  total: number;
  canceled_at: Date | null;
  created_at: Date;
}
export type BatchCounts = Record<RunState, number>;
export interface BatchView extends BatchRow {
  counts: BatchCounts;
}

/** Every input checked before anything is created: the first invalid one refuses the batch, naming its index. */
function checkInputs(
  schemas: CompiledSchemas,
  versionUid: string,
  querySchema: unknown,
  inputs: unknown,
): Record<string, unknown>[] {
  if (!Array.isArray(inputs) || inputs.length < 1 || inputs.length > MAX_BATCH_INPUTS) {
    throw badInput(`inputs must be an array of 1 to ${MAX_BATCH_INPUTS} objects`, { field: 'inputs' });
  }
  inputs.forEach((input, i) => {
    const field = `inputs[${i}]`;
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      throw badInput(`${field} must be an object`, { field });
    const invalid = checkInput(schemas, versionUid, querySchema, input, field);
    if (invalid) throw badInput(invalid.message, { field: invalid.field, index: i });
  });
  return inputs as Record<string, unknown>[];
}

/**
 * POST /circuit-adaptors/{uid}/batches (docs/batches-and-budgets.md, Batches): every input becomes an ordinary run of the same
 * version carrying `batch_uid`, admitted in one statement (admitBatch, src/runs/admission.ts).
 */
export async function createBatch(deps: RunDeps, viewer: User, input: CreateBatchInput): Promise<BatchView> {
  const circuit = await circuitToStart(deps, viewer, input);
  const isPublic = input.isPublic ?? false;
  const batchPermit = tokenMaySubmitBatch(viewer);
  authorize(viewer, batchPermit.allowed, batchPermit.message);

  const webhook = parseRunWebhook(input.webhook, input.webhookEventsFilter, deps.config.httpStepAllowPrivate);
  const alias = input.alias ?? null;
  const version = await resolveVersion(
    deps.runService,
    circuit,
    alias === null ? input.versionUid : await versionOfAlias(circuit, alias, null),
  );
  const inputs = checkInputs(deps.schemas.inputs, version.uid, version.definition.query_schema, input.inputs);
  const args = draftArgs(input);

  const concurrency = version.definition.concurrency;
  const keys = concurrency
    ? inputs.map((one, i) => concurrencySlotKey(circuit.uid, concurrency, one, `inputs[${i}]`))
    : undefined;

  const uid = crypto.randomUUID();
  const admission = await admitBatch(
    { sequelize: deps.sequelize, runQueue: deps.queue },
    {
      uid,
      inputs,
      draft: {
        ...args,
        user_uid: viewer.uid,
        circuit_uid: circuit.uid,
        circuit_version_uid: version.uid,
        is_public: isPublic,
        webhook_url: webhook?.url ?? null,
        webhook_events: webhook?.events ?? null,
        deadline_s: deps.config.runDeadlineSeconds,
        alias,
        concurrency_limit: concurrency?.limit ?? null,
      },
      keys,
    },
  );
  if (!deps.queue.sqlEnqueue && args.wake_at == null) {
    // No job store that queues in SQL: queue each admitted run (the sweeper catches any left behind);
    // a delayed start's runs are parked, queued when they wake.
    for (const runUid of admission.run_uids) await deps.queue.enqueue(runUid);
  }
  const webhookEvents = webhook?.events ?? null;
  for (const runUid of admission.run_uids) {
    deps.lifecycle.emit('created', { run: { uid: runUid, user_uid: viewer.uid, webhook_events: webhookEvents } });
  }
  // The batch as admitted: reading it back would count runs the worker is already claiming.
  return {
    uid,
    user_uid: viewer.uid,
    circuit_uid: circuit.uid,
    total: inputs.length,
    canceled_at: null,
    created_at: admission.created_at,
    counts: { PROVISIONED: admission.admitted, RUNNING: 0, COMPLETED: 0, EXCEPTION: admission.refused },
  };
}

export async function readBatch(deps: Pick<RunDeps, 'sequelize'>, uid: string): Promise<BatchView | null> {
  if (!isUid(uid)) return null;
  const [row] = await preparedQuery<BatchRow>(
    deps.sequelize,
    'SELECT uid, user_uid, circuit_uid, total, canceled_at, created_at FROM circuit_batches WHERE uid = $1',
    [uid],
  );
  if (!row) return null;
  const counted = await preparedQuery<{ state: RunState; count: string }>(
    deps.sequelize,
    'SELECT state, count(*) AS count FROM circuit_runs WHERE batch_uid = $1 GROUP BY state',
    [uid],
  );
  const counts = Object.fromEntries(RUN_STATES.map((state) => [state, 0])) as BatchCounts;
  for (const { state, count } of counted) counts[state] = Number(count);
  return { ...row, counts };
}

/** The batch, when the viewer may act on it: 404 when there is none, 401/403 (authorize) when not theirs. */
export async function findBatchFor(
  deps: Pick<RunDeps, 'sequelize'>,
  viewer: User | null,
  uid: string,
  action: BatchAction,
): Promise<BatchView> {
  const batch = await readBatch(deps, uid);
  if (!batch) throw notFound('Batch');
  authorize(viewer, batchPermits(viewer, batch, action), 'Only the user who submitted the batch may see or cancel it');
  return batch;
}

/** One page of a batch's runs, in input order. */
export async function batchRunsPage(
  batchUid: string,
  window: { limit: number; offset: number },
): Promise<{ rows: CircuitRun[]; count: number }> {
  return CircuitRun.findAndCountAll({
    where: { batch_uid: batchUid },
    attributes: { exclude: ['input'] },
    order: [
      ['created_at', 'ASC'],
      ['uid', 'ASC'],
    ],
    limit: window.limit,
    offset: window.offset,
  });
}

/**
 * Cancels every run of the batch not yet ended (each as POST /circuit-runs/{uid}/cancel does, without
 * waiting for RUNNING ones to stop) and records the cancel on the batch.
 */
export async function cancelBatch(deps: RunDeps, batch: BatchRow): Promise<void> {
  await deps.sequelize.query('UPDATE circuit_batches SET canceled_at = COALESCE(canceled_at, now()) WHERE uid = $1', {
    bind: [batch.uid],
    type: QueryTypes.UPDATE,
  });
  const open = await CircuitRun.findAll({
    where: { batch_uid: batch.uid, state: ['PROVISIONED', 'RUNNING'] },
    attributes: ['uid'],
  });
  const uids = open.map((run) => run.uid);
  const next = { i: 0 };
  const cancelOne = async (): Promise<void> => {
    while (next.i < uids.length) await cancelRun(deps, uids[next.i++], 0);
  };
  await Promise.all(Array.from({ length: Math.min(CANCEL_CONCURRENCY, uids.length) }, cancelOne));
}
