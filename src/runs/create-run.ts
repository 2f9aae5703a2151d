import crypto from 'node:crypto';
import { Op, UniqueConstraintError } from 'sequelize';
import { Circuit, User } from '../models';
import { CircuitRun, RUN_DRAFT_ARGS, RUN_DRAFT_COLUMNS, type RunDraft, type RunDraftArgs } from '../models/CircuitRun';
import { IdempotencyKey } from '../models/IdempotencyKey';
import { AppError, badInput, idempotencyKeyReused, notFound } from '../errors';
import { authorize } from '../policies/authorize';
import { startRunPermits } from '../policies/run.policy';
import { isUid } from '../ids';
import { checkInput } from '../engine/input-schema';
import { RUN_BASE_CREDITS } from '../credits/holds';
import { readBalance } from '../credits/balance';
import { admitWithinTokenCap, releaseTokenSpend, tokenSpendOf } from '../credits/token-spend';
import { markNotEnqueued } from './transitions';
import type { RunDeps } from './ports';
import { preparedQuery } from '../db/prepared';
import { parseRunWebhook } from './run-webhook';
import type { CircuitRow } from './read-cache';
import type { RunService, RunVersion } from './run-service';
import { versionOfAlias } from '../aliases/alias-version';
import { checkMetadata, checkTags } from './run-labels';
import { checkMaxCredits } from '../credits/budget';
import { checkStart, type RunStartArgs } from './delayed-start';
import { admitDebounced, type Debounced } from './debounce';
import { concurrencySlotKey, renderFlowKey } from './flow-keys';
import { RUN_PRIORITY_DEFAULT, RUN_PRIORITY_MAX, RUN_PRIORITY_MIN } from '../domain/runs';

/**
 * What a query sends. The draft columns a caller sends (RUN_COLUMNS' `draft.arg`: tags, metadata,
 * max_credits, …) come in as RunDraftArgs, by camelCase name, and are forwarded by draftArgs, as is
 * a delayed start (`start_at` or `delay_s`, RunStartArgs), which becomes the draft's `wake_at`.
 */
export interface CreateRunInput extends RunDraftArgs, RunStartArgs {
  adaptorUid: string;
  /** context.version: the version to run; the circuit's primary version when absent. */
  versionUid?: string | null;
  /** context.alias (docs/releases.md, Aliases): draw the version from this alias's routes instead; not with versionUid. */
  alias?: string | null;
  input: Record<string, unknown>;
  isPublic?: boolean | null;
  /** Same caller + same key within IDEMPOTENCY_WINDOW_HOURS returns the same run. */
  idempotencyKey?: string | null;
  /** Where to POST signed run events, and which (docs/webhooks-and-schedules.md, Webhooks). */
  webhook?: string | null;
  webhookEventsFilter?: string[] | null;
  /** `deadline_s` (1–3600): the run ends DeadlineExceeded this long after it was created (or after its delayed start); capped by RUN_DEADLINE_SECONDS, its default. */
  deadlineSeconds?: number | null;
  /** `"cache": "bypass"`: step cache reads skipped, results still stored. */
  cache?: string | null;
  /** A replay (src/runs/replay.ts): the run replayed and how. */
  replay?: { of: string; mode: 'recorded' | 'live' } | null;
  /** The caller's `traceparent` header: the run's trace continues it. */
  traceparent?: string | null;
}

/** A query's `priority`, checked: a whole number from 0 to 9, null (the default, 5) when not sent. */
export function checkPriority(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < RUN_PRIORITY_MIN || value > RUN_PRIORITY_MAX)
    throw badInput(
      `priority must be a whole number from ${RUN_PRIORITY_MIN} to ${RUN_PRIORITY_MAX} (default ${RUN_PRIORITY_DEFAULT}; higher first)`,
      { field: 'priority' },
    );
  return value;
}

/** The checks of the draft columns a caller sends (`draft.arg`): the value to store, or badInput. Without one, stored as sent. */
const DRAFT_ARG_CHECKS: { [A in keyof RunDraftArgs]?: (value: unknown) => unknown } = {
  tags: checkTags,
  metadata: checkMetadata,
  maxCredits: checkMaxCredits,
  priority: checkPriority,
};

/**
 * The draft columns a caller sent (`draft.arg` of RUN_COLUMNS), checked, in RUN_COLUMNS' order, and
 * `wake_at`, the delayed start asked for (null: at once): what a query and a batch forward.
 */
export function draftArgs(input: RunDraftArgs & RunStartArgs): Partial<RunDraft> {
  return {
    ...Object.fromEntries(
      RUN_DRAFT_ARGS.map(({ column, arg }) => {
        const check = DRAFT_ARG_CHECKS[arg];
        return [column, check ? check(input[arg]) : (input[arg] ?? null)];
      }),
    ),
    wake_at: checkStart(input),
  };
}

export interface CreateRunResult {
  run: CircuitRun;
  circuit: Circuit;
  /** True when an Idempotency-Key named a run started earlier. */
  replayed: boolean;
}

export const IDEMPOTENCY_WINDOW_HOURS = 24;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** An Idempotency-Key as sent: 400 naming it unless it is 1–255 visible ASCII characters. */
export function checkIdempotencyKey(key: string): void {
  if (!IDEMPOTENCY_KEY.test(key))
    throw badInput('Idempotency-Key must be 1-255 visible ASCII characters', { field: 'Idempotency-Key' });
}

/** The draft columns a caller sends that joined the request hash together, as one object (hashes already issued keep their value). */
const FIRST_HASHED_ARGS = ['tags', 'metadata', 'max_credits'];

function requestHash(input: CreateRunInput): string {
  // Fields added later join only when sent, so the hash of a request without them is unchanged. Every
  // draft column a caller sends (RUN_COLUMNS' `draft.arg`) is hashed: the same key with another value is another request.
  const first = FIRST_HASHED_ARGS.flatMap((name) => RUN_DRAFT_ARGS.filter(({ column }) => column === name));
  const labels = first.some(({ arg }) => input[arg] != null)
    ? [Object.fromEntries(first.map(({ column, arg }) => [column, input[arg] ?? null]))]
    : [];
  const later = RUN_DRAFT_ARGS.filter(
    ({ column, arg }) => !FIRST_HASHED_ARGS.includes(column) && input[arg] != null,
  ).map(({ column, arg }) => ({ [column]: input[arg] }));
  // A delayed start as sent (`delay_s` counts from each request, so a retry with the same delay is the same request).
  const start = [
    ...(input.startAt != null ? [{ start_at: input.startAt }] : []),
    ...(input.delaySeconds != null ? [{ delay_s: input.delaySeconds }] : []),
  ];
  const canonical = JSON.stringify([
    input.adaptorUid,
    input.versionUid ?? null,
    input.isPublic ?? false,
    input.input,
    ...(input.alias != null ? [input.alias] : []),
    ...labels,
    ...later,
    ...start,
  ]);
  return crypto.createHash('sha256').update(canonical).digest('hex');
}

async function findReplay(viewer: User, key: string, hash: string): Promise<CircuitRun | null> {
  const record = await IdempotencyKey.findOne({ where: { user_uid: viewer.uid, key } });
  if (!record || record.created_at.getTime() < Date.now() - IDEMPOTENCY_WINDOW_HOURS * 3600_000) return null;
  if (record.request_hash !== hash || record.run_uid === null) throw idempotencyKeyReused();
  const run = await CircuitRun.findByPk(record.run_uid);
  return run && asFirstAnswered(run);
}

/**
 * A replay answers what the first request was answered (IETF Idempotency-Key draft, Stripe): the run
 * as it was created, PROVISIONED, not as it is now. Only the fields a new run has are kept.
 */
function asFirstAnswered(run: CircuitRun): CircuitRun {
  return CircuitRun.build(
    {
      ...(Object.fromEntries(RUN_DRAFT_COLUMNS.map((column) => [column, run.get(column)])) as Pick<
        CircuitRun,
        (typeof RUN_DRAFT_COLUMNS)[number]
      >),
      uid: run.uid,
      state: 'PROVISIONED',
      created_at: run.created_at,
      updated_at: run.created_at,
    },
    { isNewRecord: false },
  );
}

/** Versions are immutable (definition and circuit never change), so a run's version is kept by uid (RunService.versions). */
async function loadVersion(runs: RunService, uid: string): Promise<RunVersion | null> {
  return (await runs.versions.fetch(uid)) ?? null;
}

export async function resolveVersion(
  runs: RunService,
  circuit: Circuit,
  versionUid: string | null | undefined,
): Promise<RunVersion> {
  if (versionUid !== undefined && versionUid !== null) {
    const version = isUid(versionUid) ? await loadVersion(runs, versionUid) : null;
    if (!version || version.circuit_uid !== circuit.uid) throw notFound('Circuit version');
    return version;
  }
  const primary = circuit.primary_version_uid ? await loadVersion(runs, circuit.primary_version_uid) : null;
  if (!primary) throw notFound('Circuit version (the circuit has no published version)');
  return primary;
}

/** The circuit behind an adaptor, in one query or from the per-process cache that changes to circuits clear. */
let circuitOfAdaptorSelect: string | undefined;
export async function circuitOfAdaptor(runs: RunService, adaptorUid: string): Promise<Circuit | null> {
  if (!isUid(adaptorUid)) return null;
  // The model's columns only: `c.*` would also carry (and the cache keep) the circuit's search vector.
  circuitOfAdaptorSelect ??= `SELECT ${Object.keys(Circuit.getAttributes())
    .map((a) => `c."${a}"`)
    .join(', ')} FROM circuits c JOIN circuit_adaptors a ON a.circuit_uid = c.uid WHERE a.uid = $1`;
  const cache = runs.readCache;
  let row: CircuitRow | null | undefined = cache.circuitOfAdaptor(adaptorUid);
  if (!row) {
    const select = circuitOfAdaptorSelect;
    row = await cache.readCircuitOfAdaptorOnce(adaptorUid, async (begunAt) => {
      const [read] = await preparedQuery<CircuitRow>(Circuit.sequelize!, select, [adaptorUid]);
      if (read) cache.setCircuitOfAdaptor(adaptorUid, read, begunAt);
      return read ?? null;
    });
    if (!row) return null;
  }
  // A copy: the cached row is frozen and shared.
  return Circuit.build({ ...row } as never, { isNewRecord: false, raw: true });
}

async function insufficientCredits(deps: RunDeps, viewer: User): Promise<AppError> {
  const { credits: balance, held } = await readBalance(deps.sequelize, viewer.uid);
  const unheld = held > 0 ? ` (${held} held by runs in progress)` : '';
  return new AppError(
    'InsufficientCredits',
    `A run needs ${RUN_BASE_CREDITS} credit; your balance is ${balance}${unheld}`,
  );
}

/**
 * POST /circuit-adaptors/{adaptor_uid}/query: checks the caller may run the circuit, resolves the
 * version, validates `input` against its query schema, checks the balance covers the minimum cost,
 * inserts the run PROVISIONED and queues its job in the same statement (PostgreSQL job store) or right
 * after (MongoDB: the worker sweeper queues any run whose enqueue failed at once, and any left
 * PROVISIONED by a process that died in between after a few minutes, so none stays PROVISIONED for ever).
 */
/**
 * What every start of runs checks first (a query, a batch): version or alias, not both; the adaptor's
 * circuit; the run policy (with the token's scopes and allow-list). Answers the circuit.
 */
export async function circuitToStart(
  deps: RunDeps,
  viewer: User,
  input: {
    adaptorUid: string;
    versionUid?: string | null;
    alias?: string | null;
    isPublic?: boolean | null;
    webhook?: string | null;
  },
) {
  if (input.alias != null && input.versionUid != null)
    throw badInput('Send context.version or context.alias, not both', { field: 'context.alias' });
  const circuit = await circuitOfAdaptor(deps.runService, input.adaptorUid);
  if (!circuit) throw notFound('Circuit adaptor');
  const permit = startRunPermits(viewer, circuit, input.isPublic ?? false, { webhook: input.webhook != null });
  authorize(viewer, permit.allowed, permit.message);
  return circuit;
}

export async function createRun(deps: RunDeps, viewer: User, input: CreateRunInput): Promise<CreateRunResult> {
  const circuit = await circuitToStart(deps, viewer, input);
  const isPublic = input.isPublic ?? false;

  const key = input.idempotencyKey ?? null;
  // Hashing the whole input is only needed to match a key; most requests carry none.
  const hash = key === null ? '' : requestHash(input);
  if (key !== null) {
    checkIdempotencyKey(key);
    const replay = await findReplay(viewer, key, hash);
    if (replay) return { run: replay, circuit, replayed: true };
  }

  const webhook = parseRunWebhook(input.webhook, input.webhookEventsFilter, deps.config.httpStepAllowPrivate);
  const alias = input.alias ?? null;
  const version = await resolveVersion(
    deps.runService,
    circuit,
    alias === null ? input.versionUid : await versionOfAlias(circuit, alias, key),
  );
  const invalid = checkInput(deps.schemas.inputs, version.uid, version.definition.query_schema, input.input);
  if (invalid) throw badInput(invalid.message, { field: invalid.field });

  const deadline = input.deadlineSeconds ?? null;
  if (deadline !== null && (!Number.isInteger(deadline) || deadline < 1 || deadline > 3600)) {
    throw badInput('deadline_s must be a whole number of seconds from 1 to 3600', { field: 'deadline_s' });
  }
  if (input.cache != null && input.cache !== 'bypass')
    throw badInput('cache must be "bypass" when sent', { field: 'cache' });
  const args = draftArgs(input);
  const deadlineSeconds = Math.min(deadline ?? deps.config.runDeadlineSeconds, deps.config.runDeadlineSeconds);

  // Debounce (docs/runs.md, Debounce): a replay is never debounced, and the window says when the run starts.
  const debounce = input.replay ? undefined : version.definition.debounce;
  if (debounce && args.wake_at != null)
    throw badInput(
      "This circuit's version debounces its queries: its runs start at the end of their window, so start_at and delay_s cannot be sent",
      { field: input.startAt != null ? 'start_at' : 'delay_s' },
    );
  const debounceKey = debounce ? renderFlowKey(debounce.key, input.input, 'debounce.key') : null;
  const concurrency = version.definition.concurrency;

  let inserted: Debounced | null;
  // A token's daily credit cap (docs/tokens.md, Daily credit cap): the base credit is counted on the token's day before the run is admitted.
  const spend = tokenSpendOf(viewer.tokenGrant);
  try {
    const fields: RunDraft = {
      ...args,
      user_uid: viewer.uid,
      circuit_uid: circuit.uid,
      circuit_version_uid: version.uid,
      input: input.input,
      is_public: isPublic,
      webhook_url: webhook?.url ?? null,
      webhook_events: webhook?.events ?? null,
      deadline_s: deadlineSeconds,
      alias,
      cache_bypass: input.cache === 'bypass',
      replay_of: input.replay?.of ?? null,
      replay_mode: input.replay?.mode ?? null,
      traceparent: deps.tracer.queryTraceparent(input.traceparent, circuit.uid, version.uid),
      spend_token_uid: spend?.tokenUid ?? null,
      spend_day: spend?.day ?? null,
      debounce_key: debounceKey,
      concurrency_key: concurrency ? concurrencySlotKey(circuit.uid, concurrency, input.input) : null,
      concurrency_limit: concurrency?.limit ?? null,
    };
    // One INSERT is its own unit of work; with a key, the key row joins it in a transaction, as does a debounce's lookup.
    inserted = await admitWithinTokenCap(deps.sequelize, spend, RUN_BASE_CREDITS, () =>
      key === null && !debounce
        ? deps.runService.admission.admit(fields).then((admitted) => admitted && { admitted, joined: false })
        : deps.sequelize.transaction(async (transaction) => {
            const outcome = debounce
              ? await admitDebounced(deps, fields, debounce.window_s, transaction)
              : { admitted: await deps.runService.admission.admit(fields, transaction), joined: false };
            const created = outcome.admitted;
            if (!created) return null;
            if (key === null) return outcome;
            const expired = new Date(Date.now() - IDEMPOTENCY_WINDOW_HOURS * 3600_000);
            await IdempotencyKey.destroy({
              where: { user_uid: viewer.uid, key, created_at: { [Op.lt]: expired } },
              transaction,
            });
            await IdempotencyKey.create(
              { user_uid: viewer.uid, key, request_hash: hash, run_uid: created.run.uid },
              { transaction },
            );
            return outcome;
          }),
    );
  } catch (error) {
    if (error instanceof UniqueConstraintError && key !== null) {
      // A concurrent request with the same key won; answer with its run.
      const replay = await findReplay(viewer, key, hash);
      if (replay) return { run: replay, circuit, replayed: true };
    }
    throw error;
  }

  if (!inserted?.admitted) throw await insufficientCredits(deps, viewer);
  const { run, queued } = inserted.admitted;
  if (inserted.joined) {
    // The caller joined a run its own earlier query made: no new run, no new credit counted on the token's day.
    if (spend) await releaseTokenSpend(deps.sequelize, spend, RUN_BASE_CREDITS);
    return { run, circuit, replayed: false };
  }
  deps.lifecycle.emit('created', { run: { uid: run.uid, user_uid: run.user_uid, webhook_events: run.webhook_events } });
  // A delayed start is parked, not queued: it is queued when it wakes.
  if (queued || run.parked_at != null) return { run, circuit, replayed: false };
  try {
    await deps.queue.enqueue(run.uid);
  } catch (error) {
    deps.log.error({ err: error, run: run.uid }, 'could not queue a run; the worker sweeper will queue it');
    await markNotEnqueued(deps.sequelize, run.uid).catch(() => {});
  }
  return { run, circuit, replayed: false };
}
