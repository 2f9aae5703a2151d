import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

export const RUN_STATES = ['PROVISIONED', 'RUNNING', 'COMPLETED', 'EXCEPTION'] as const;
export type RunState = (typeof RUN_STATES)[number];
export const TERMINAL_STATES: readonly RunState[] = ['COMPLETED', 'EXCEPTION'];

/** How far along a state is; a state never moves to a lower rank (spec §3). */
export function stateRank(state: RunState): number {
  return state === 'PROVISIONED' ? 0 : state === 'RUNNING' ? 1 : 2;
}

export function isTerminal(state: RunState): boolean {
  return TERMINAL_STATES.includes(state);
}

/**
 * One execution of a circuit version. State changes go through src/jobs/run-transitions.ts only
 * (guarded UPDATEs), never through `save()`.
 */
export class CircuitRun extends Model<InferAttributes<CircuitRun>, InferCreationAttributes<CircuitRun>> {
  declare uid: CreationOptional<string>;
  declare user_uid: string;
  declare circuit_uid: string;
  declare circuit_version_uid: string;
  declare state: CreationOptional<RunState>;
  declare is_public: CreationOptional<boolean>;
  declare input: Record<string, unknown>;
  declare result_blob: CreationOptional<Record<string, unknown> | null>;
  declare metrics: CreationOptional<Record<string, unknown> | null>;
  /** Why a run ended in EXCEPTION: for logs and the owner's operators, never shown by the API. */
  declare failure_reason: CreationOptional<string | null>;
  /** What the run cost (1 + its steps' credits); what was taken from the balance is in the ledger. */
  declare credits_cost: CreationOptional<string | number | null>;
  declare attempt: CreationOptional<number>;
  declare enqueued_at: CreationOptional<Date | null>;
  declare heartbeat_at: CreationOptional<Date | null>;
  declare started_at: CreationOptional<Date | null>;
  declare ended_at: CreationOptional<Date | null>;
  /** Where and what to deliver (DESIGN §7.5); null without a webhook. */
  declare webhook_url: CreationOptional<string | null>;
  declare webhook_events: CreationOptional<string[] | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    CircuitRun.init(
      {
        uid: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
        user_uid: { type: DataTypes.UUID, allowNull: false },
        circuit_uid: { type: DataTypes.UUID, allowNull: false },
        circuit_version_uid: { type: DataTypes.UUID, allowNull: false },
        state: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'PROVISIONED' },
        is_public: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        input: { type: DataTypes.JSONB, allowNull: false },
        result_blob: { type: DataTypes.JSONB, allowNull: true },
        metrics: { type: DataTypes.JSONB, allowNull: true },
        failure_reason: { type: DataTypes.TEXT, allowNull: true },
        credits_cost: { type: DataTypes.BIGINT, allowNull: true },
        attempt: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        enqueued_at: { type: DataTypes.DATE, allowNull: true },
        heartbeat_at: { type: DataTypes.DATE, allowNull: true },
        started_at: { type: DataTypes.DATE, allowNull: true },
        ended_at: { type: DataTypes.DATE, allowNull: true },
        webhook_url: { type: DataTypes.TEXT, allowNull: true },
        webhook_events: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: true },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'circuit_runs' },
    );
  }
}
