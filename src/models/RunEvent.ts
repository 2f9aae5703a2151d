import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

export const RUN_EVENT_KINDS = ['state', 'step', 'output'] as const;
export type RunEventKind = (typeof RUN_EVENT_KINDS)[number];

/**
 * One entry of a run's event log (docs/runs.md, Event log): `seq` is gap-free from 1 per run. `data` is
 * `{state}` for state events (presented as the run as of that state), the step event for `step`,
 * `{step_id, delta}` for `output`. Written by src/runs/events/log.ts and the state triggers.
 */
export class RunEvent extends Model<InferAttributes<RunEvent>, InferCreationAttributes<RunEvent>> {
  declare run_uid: string;
  declare seq: number;
  declare kind: RunEventKind;
  declare data: Record<string, unknown>;
  declare created_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    RunEvent.init(
      {
        run_uid: { type: DataTypes.UUID, primaryKey: true },
        seq: { type: DataTypes.INTEGER, primaryKey: true },
        kind: { type: DataTypes.TEXT, allowNull: false },
        data: { type: DataTypes.JSONB, allowNull: false },
        created_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'circuit_run_events', updatedAt: false },
    );
  }
}
