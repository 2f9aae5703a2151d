import {
  CreationOptional,
  DataTypes,
  InferAttributes,
  InferCreationAttributes,
  Model,
  ModelAttributeColumnOptions,
  Sequelize,
} from 'sequelize';
import { TERMINAL_STATES, type RunError, type RunState } from '../domain/runs';

/**
 * How a column shows in the API (GraphQL field `name`, REST/event field = the column name):
 * - `when`: the states in which it has a value (null, and absent in REST, otherwise);
 * - `ownerOnly`: only the run's owner sees it (decided by the run policy's `debug` action).
 * Columns without `api` never leave the service.
 */
export interface RunApiField {
  name: string;
  description?: string;
  when?: readonly RunState[];
  ownerOnly?: boolean;
  enumOf?: 'state';
}

/**
 * How a column is written when a run is created (the write shape, as `api` is the read shape): a column
 * with `draft` is one of RunDraft, the row createRun and createBatch hand to admission, whose statements
 * (src/runs/admission.ts) take their column lists and parameter types (the column's SQL type) from here.
 * A draft column left out of a draft gets its `defaultValue`, else null.
 * - `arg`: the caller sends it, under its camelCase name (`max_credits`: `maxCredits`, the GraphQL argument
 *   and the field of CreateRunInput/CreateBatchInput); createRun and createBatch forward it, through its
 *   check if src/runs/create-run.ts has one (DRAFT_ARG_CHECKS). Without `arg` the service sets it.
 */
export interface RunDraftField {
  arg?: true;
}
type RunColumn = ModelAttributeColumnOptions & { api?: RunApiField; draft?: RunDraftField };

/**
 * THE declaration of a run's columns: the Sequelize model, the GraphQL `CircuitRun` type
 * (src/graphql/run/run.type.ts builds its fields from `api`), and through the REST fragment
 * (schema/operations/runs.graphql, checked against this table by test) REST payloads and event data;
 * with `draft`, what a new run is made of (RunDraft) and the statements that insert it.
 */
export const RUN_COLUMNS = {
  uid: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4, api: { name: 'uid' } },
  user_uid: {
    type: DataTypes.UUID,
    allowNull: false,
    draft: {},
    api: { name: 'userUid', description: 'The user who started the run' },
  },
  circuit_uid: { type: DataTypes.UUID, allowNull: false, draft: {}, api: { name: 'circuitUid' } },
  circuit_version_uid: { type: DataTypes.UUID, allowNull: false, draft: {}, api: { name: 'circuitVersionUid' } },
  alias: {
    type: DataTypes.TEXT,
    allowNull: true,
    draft: {},
    api: {
      name: 'alias',
      description:
        'The alias the version was drawn from (context.alias); null when the query named its version or ran the primary one',
    },
  },
  replay_of: {
    type: DataTypes.UUID,
    allowNull: true,
    draft: {},
    api: { name: 'replayOf', description: 'The run this one replays; null for other runs' },
  },
  tags: {
    type: DataTypes.ARRAY(DataTypes.TEXT),
    allowNull: true,
    draft: { arg: true },
    api: {
      name: 'tags',
      ownerOnly: true,
      description: "The caller's tags sent with the query; for the run's owner only",
    },
  },
  metadata: {
    type: DataTypes.JSONB,
    allowNull: true,
    draft: { arg: true },
    api: {
      name: 'metadata',
      ownerOnly: true,
      description: "The caller's metadata ({key: string}) sent with the query; for the run's owner only",
    },
  },
  batch_uid: {
    type: DataTypes.UUID,
    allowNull: true,
    api: {
      name: 'batchUid',
      ownerOnly: true,
      description: "The batch the run was submitted in; for the run's owner only",
    },
  },
  /** The query's max_credits, its spend cap: the run never costs more; null: no cap but the balance. */
  max_credits: { type: DataTypes.BIGINT, allowNull: true, draft: { arg: true } },
  /**
   * The query's `priority`, 0–9 (default 5): among one user's runs waiting for a slot, higher ones are claimed
   * first (src/runs/transitions.ts); never ahead of another user's runs.
   */
  priority: {
    type: DataTypes.SMALLINT,
    allowNull: false,
    defaultValue: 5,
    draft: { arg: true },
    api: {
      name: 'priority',
      ownerOnly: true,
      description:
        "The query's priority, 0–9 (5 when it sent none): among its owner's runs waiting for a slot, higher ones start first; for the run's owner only",
    },
  },
  /** How a replay reuses the original's outputs: 'recorded' or 'live'; null for other runs. */
  replay_mode: { type: DataTypes.TEXT, allowNull: true, draft: {} },
  /** The query sent "cache": "bypass": step cache reads skipped, results still stored. */
  cache_bypass: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false, draft: {} },
  created_at: { type: DataTypes.DATE, api: { name: 'createdAt' } },
  ended_at: {
    type: DataTypes.DATE,
    allowNull: true,
    api: { name: 'endedAt', when: TERMINAL_STATES, description: 'Set once the run is COMPLETED or EXCEPTION' },
  },
  state: {
    type: DataTypes.TEXT,
    allowNull: false,
    defaultValue: 'PROVISIONED',
    api: { name: 'state', enumOf: 'state' },
  },
  is_public: {
    type: DataTypes.BOOLEAN,
    allowNull: false,
    defaultValue: false,
    draft: {},
    api: { name: 'isPublic', description: 'Whether anyone may read the run' },
  },
  input: { type: DataTypes.JSONB, allowNull: false, draft: {} },
  result_blob: {
    type: DataTypes.JSONB,
    allowNull: true,
    api: {
      name: 'resultBlob',
      when: ['COMPLETED'],
      description: '{output, steps: {<id>: {kind, output, started_at, ended_at, credits}}}; only when COMPLETED',
    },
  },
  metrics: {
    type: DataTypes.JSONB,
    allowNull: true,
    api: {
      name: 'metrics',
      when: ['COMPLETED'],
      description: "Values of the circuit's metric configuration ({name: value}); completed runs only",
    },
  },
  error: {
    type: DataTypes.JSONB,
    allowNull: true,
    api: {
      name: 'error',
      when: ['EXCEPTION'],
      ownerOnly: true,
      description: 'Why the run failed ({code, message, step_id}); EXCEPTION runs, for their owner only',
    },
  },
  /** Internal detail of a failure for the service log; the owner sees `error`. */
  failure_reason: { type: DataTypes.TEXT, allowNull: true },
  /** What the run cost (1 + its steps' credits); what was taken from the balance is in the ledger. */
  credits_cost: { type: DataTypes.BIGINT, allowNull: true },
  /** Credits reserved for the run while it is in flight (src/credits/holds.ts). */
  credits_held: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
  attempt: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
  enqueued_at: { type: DataTypes.DATE, allowNull: true },
  heartbeat_at: { type: DataTypes.DATE, allowNull: true },
  started_at: { type: DataTypes.DATE, allowNull: true },
  deadline_at: { type: DataTypes.DATE, allowNull: true },
  cancel_requested_at: { type: DataTypes.DATE, allowNull: true },
  /**
   * A parked run holds no memory in any process and is not queued until `wake_at` (or a signal). A run
   * created with a delayed start (docs/runs.md, Delayed start) is inserted PROVISIONED and parked, its
   * draft's `wake_at` the instant it is to start (src/runs/admission.ts).
   */
  parked_at: { type: DataTypes.DATE, allowNull: true },
  wake_at: { type: DataTypes.DATE, allowNull: true, draft: {} },
  /**
   * Its rendered key under its version's `debounce` (src/runs/debounce.ts): while the window is open the run is
   * parked until `wake_at`, and a query of the same caller, version and key replaces its input.
   */
  debounce_key: { type: DataTypes.TEXT, allowNull: true, draft: {} },
  /**
   * Its slot key under its version's `concurrency` (its circuit's uid and rendered key, src/runs/create-run.ts)
   * and that version's limit: the claim statement holds the key to `concurrency_limit` RUNNING runs
   * (src/runs/transitions.ts, migration 0035). Null for runs without one.
   */
  concurrency_key: { type: DataTypes.TEXT, allowNull: true, draft: {} },
  concurrency_limit: { type: DataTypes.INTEGER, allowNull: true, draft: {} },
  worker: { type: DataTypes.TEXT, allowNull: true },
  worker_backend_pid: { type: DataTypes.INTEGER, allowNull: true },
  event_seq: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
  /** Where and what to deliver (the query's webhook and webhook_events_filter); null without a webhook. */
  webhook_url: { type: DataTypes.TEXT, allowNull: true, draft: {} },
  webhook_events: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: true, draft: {} },
  /** The W3C trace context the run's span continues: the query's (src/runs/create-run.ts). */
  traceparent: { type: DataTypes.TEXT, allowNull: true, draft: {} },
  /** A token's daily credit cap (src/credits/token-spend.ts): the capped token and the UTC day the run's credits count on. */
  spend_token_uid: { type: DataTypes.UUID, allowNull: true, draft: {} },
  spend_day: { type: DataTypes.DATEONLY, allowNull: true, draft: {} },
  updated_at: { type: DataTypes.DATE },
} satisfies Record<string, RunColumn>;

export type RunColumnName = keyof typeof RUN_COLUMNS;

type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;
type DraftSpec<K extends RunColumnName> = (typeof RUN_COLUMNS)[K] extends { draft: infer D } ? D : never;
/** The columns of a run's draft (RUN_COLUMNS' `draft`), and those of them the caller sends (`arg`). */
export type RunDraftColumn = { [K in RunColumnName]: [DraftSpec<K>] extends [never] ? never : K }[RunColumnName];
export type RunDraftArgColumn = {
  [K in RunDraftColumn]: DraftSpec<K> extends { arg: true } ? K : never;
}[RunDraftColumn];
/** What the caller sends of a draft, by camelCase name, unchecked. */
export type RunDraftArgs = { [K in RunDraftArgColumn as CamelCase<K>]?: unknown };

type RunCreation = InferCreationAttributes<CircuitRun>;
type CreationOptionalColumn = {
  [K in keyof RunCreation]: undefined extends RunCreation[K] ? K : never;
}[keyof RunCreation];
/**
 * What a new run is made of: its draft columns (those the model declares CreationOptional may be left
 * out) and `deadline_s`, the seconds its deadline is after the statement that admits it.
 */
export type RunDraft = Omit<Pick<RunCreation, RunDraftColumn>, CreationOptionalColumn> &
  Partial<Pick<RunCreation, RunDraftColumn & CreationOptionalColumn>> & { deadline_s: number };

const camelCase = (column: string) => column.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
export const RUN_DRAFT_COLUMNS = (Object.keys(RUN_COLUMNS) as RunColumnName[]).filter(
  (column): column is RunDraftColumn => 'draft' in RUN_COLUMNS[column],
);
export const RUN_DRAFT_ARGS = RUN_DRAFT_COLUMNS.flatMap((column) => {
  const draft = (RUN_COLUMNS[column] as RunColumn).draft;
  return draft?.arg ? [{ column: column as RunDraftArgColumn, arg: camelCase(column) as keyof RunDraftArgs }] : [];
});

/** The SQL type of a run column as the model declares it to PostgreSQL (`TEXT[]`, `BIGINT`, …); the model must be initialised. */
export function runColumnSqlType(column: RunColumnName): string {
  return (CircuitRun.getAttributes()[column].type as { toSql(): string }).toSql();
}

/**
 * One execution of a circuit version. State changes go through src/runs/transitions.ts only
 * (guarded UPDATEs), never through `save()`.
 */
export class CircuitRun extends Model<InferAttributes<CircuitRun>, InferCreationAttributes<CircuitRun>> {
  declare uid: CreationOptional<string>;
  declare user_uid: string;
  declare circuit_uid: string;
  declare circuit_version_uid: string;
  declare alias: CreationOptional<string | null>;
  declare replay_of: CreationOptional<string | null>;
  declare replay_mode: CreationOptional<'recorded' | 'live' | null>;
  declare cache_bypass: CreationOptional<boolean>;
  declare tags: CreationOptional<string[] | null>;
  declare metadata: CreationOptional<Record<string, string> | null>;
  declare batch_uid: CreationOptional<string | null>;
  declare max_credits: CreationOptional<string | number | null>;
  declare priority: CreationOptional<number>;
  declare state: CreationOptional<RunState>;
  declare is_public: CreationOptional<boolean>;
  declare input: Record<string, unknown>;
  declare result_blob: CreationOptional<Record<string, unknown> | null>;
  declare metrics: CreationOptional<Record<string, unknown> | null>;
  declare error: CreationOptional<RunError | null>;
  declare failure_reason: CreationOptional<string | null>;
  declare credits_cost: CreationOptional<string | number | null>;
  declare credits_held: CreationOptional<string | number>;
  declare attempt: CreationOptional<number>;
  declare enqueued_at: CreationOptional<Date | null>;
  declare heartbeat_at: CreationOptional<Date | null>;
  declare started_at: CreationOptional<Date | null>;
  declare ended_at: CreationOptional<Date | null>;
  /** Where and what to deliver; null without a webhook. */
  declare webhook_url: CreationOptional<string | null>;
  declare webhook_events: CreationOptional<string[] | null>;
  declare traceparent: CreationOptional<string | null>;
  declare spend_token_uid: CreationOptional<string | null>;
  declare spend_day: CreationOptional<string | null>;
  declare deadline_at: CreationOptional<Date | null>;
  declare cancel_requested_at: CreationOptional<Date | null>;
  declare parked_at: CreationOptional<Date | null>;
  declare wake_at: CreationOptional<Date | null>;
  declare debounce_key: CreationOptional<string | null>;
  declare concurrency_key: CreationOptional<string | null>;
  declare concurrency_limit: CreationOptional<number | null>;
  declare worker: CreationOptional<string | null>;
  declare worker_backend_pid: CreationOptional<number | null>;
  declare event_seq: CreationOptional<number>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    const attributes = Object.fromEntries(
      Object.entries(RUN_COLUMNS as Record<string, RunColumn>).map(([name, { api: _api, ...column }]) => [
        name,
        column,
      ]),
    );
    CircuitRun.init(attributes as never, { sequelize, tableName: 'circuit_runs' });
  }
}
