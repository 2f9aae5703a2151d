import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, ModelAttributeColumnOptions, Sequelize } from 'sequelize';
import { TERMINAL_STATES, type RunError, type RunState } from '../domain/runs';

/**
 * A run's states, failure codes and API limits are declared in src/domain/runs.ts (no Sequelize). Re-exported
 * here only for src/runs/ and src/webhooks/, left unchanged; other code imports src/domain/runs.ts.
 */
export {
  RUN_STATES, TERMINAL_STATES, stateRank, isTerminal, RUN_ERROR_CODES, RUN_OPTIONAL_FIELDS, MAX_APPROVAL_COMMENT_CHARS, MAX_APPROVAL_DATA_BYTES,
} from '../domain/runs';
export type { RunState, RunErrorCode, RunError } from '../domain/runs';

/**
 * How a column shows in the API (GraphQL field `name`, REST/event field = the column name):
 * - `when`: the states in which it has a value (null, and absent in REST, otherwise);
 * - `ownerOnly`: only the run's owner sees it (decided by the run policy's `debug` action).
 * Columns without `api` never leave the service.
 */
export interface RunApiField { name: string; description?: string; when?: readonly RunState[]; ownerOnly?: boolean; enumOf?: 'state' }
type RunColumn = ModelAttributeColumnOptions & { api?: RunApiField };

/**
 * THE declaration of a run's columns: the Sequelize model, the GraphQL `CircuitRun` type
 * (src/graphql/run/run.type.ts builds its fields from `api`), and through the REST fragment
 * (schema/operations/runs.graphql, checked against this table by test) REST payloads and event data.
 */
export const RUN_COLUMNS = {
  uid: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4, api: { name: 'uid' } },
  user_uid: { type: DataTypes.UUID, allowNull: false, api: { name: 'userUid', description: 'The user who started the run' } },
  circuit_uid: { type: DataTypes.UUID, allowNull: false, api: { name: 'circuitUid' } },
  circuit_version_uid: { type: DataTypes.UUID, allowNull: false, api: { name: 'circuitVersionUid' } },
  alias: { type: DataTypes.TEXT, allowNull: true, api: { name: 'alias', description: 'The alias the version was drawn from (context.alias); null when the query named its version or ran the primary one' } },
  replay_of: { type: DataTypes.UUID, allowNull: true, api: { name: 'replayOf', description: 'The run this one replays (DESIGN §10.2); null for other runs' } },
  tags: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: true, api: { name: 'tags', ownerOnly: true, description: "The caller's tags sent with the query (DESIGN §12); for the run's owner only" } },
  metadata: { type: DataTypes.JSONB, allowNull: true, api: { name: 'metadata', ownerOnly: true, description: "The caller's metadata ({key: string}) sent with the query (DESIGN §12); for the run's owner only" } },
  batch_uid: { type: DataTypes.UUID, allowNull: true, api: { name: 'batchUid', ownerOnly: true, description: 'The batch the run was submitted in (DESIGN §12); for the run\'s owner only' } },
  /** The query's max_credits (DESIGN §12): the run never costs more; null: no cap but the balance. */
  max_credits: { type: DataTypes.BIGINT, allowNull: true },
  /** How a replay reuses the original's outputs: 'recorded' or 'live'; null for other runs. */
  replay_mode: { type: DataTypes.TEXT, allowNull: true },
  /** The query sent "cache": "bypass" (DESIGN §9.5): step cache reads skipped, results still stored. */
  cache_bypass: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
  created_at: { type: DataTypes.DATE, api: { name: 'createdAt' } },
  ended_at: { type: DataTypes.DATE, allowNull: true, api: { name: 'endedAt', when: TERMINAL_STATES, description: 'Set once the run is COMPLETED or EXCEPTION' } },
  state: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'PROVISIONED', api: { name: 'state', enumOf: 'state' } },
  is_public: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false, api: { name: 'isPublic', description: 'Whether anyone may read the run' } },
  input: { type: DataTypes.JSONB, allowNull: false },
  result_blob: {
    type: DataTypes.JSONB, allowNull: true,
    api: { name: 'resultBlob', when: ['COMPLETED'], description: '{output, steps: {<id>: {kind, output, started_at, ended_at, credits}}}; only when COMPLETED' },
  },
  metrics: {
    type: DataTypes.JSONB, allowNull: true,
    api: { name: 'metrics', when: ['COMPLETED'], description: "Values of the circuit's metric configuration ({name: value}); completed runs only" },
  },
  error: {
    type: DataTypes.JSONB, allowNull: true,
    api: { name: 'error', when: ['EXCEPTION'], ownerOnly: true, description: 'Why the run failed ({code, message, step_id}); EXCEPTION runs, for their owner only' },
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
  worker: { type: DataTypes.TEXT, allowNull: true },
  worker_backend_pid: { type: DataTypes.INTEGER, allowNull: true },
  event_seq: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
  /** Where and what to deliver (DESIGN §7.5); null without a webhook. */
  webhook_url: { type: DataTypes.TEXT, allowNull: true },
  webhook_events: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: true },
  updated_at: { type: DataTypes.DATE },
} satisfies Record<string, RunColumn>;

export type RunColumnName = keyof typeof RUN_COLUMNS;

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
  /** Where and what to deliver (DESIGN §7.5); null without a webhook. */
  declare webhook_url: CreationOptional<string | null>;
  declare webhook_events: CreationOptional<string[] | null>;
  declare deadline_at: CreationOptional<Date | null>;
  declare cancel_requested_at: CreationOptional<Date | null>;
  declare worker: CreationOptional<string | null>;
  declare worker_backend_pid: CreationOptional<number | null>;
  declare event_seq: CreationOptional<number>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    const attributes = Object.fromEntries(Object.entries(RUN_COLUMNS as Record<string, RunColumn>).map(([name, { api: _api, ...column }]) => [name, column]));
    CircuitRun.init(attributes as never, { sequelize, tableName: 'circuit_runs' });
  }
}
