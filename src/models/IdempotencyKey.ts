import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

/**
 * An `Idempotency-Key` a caller sent (valid for 24 hours): with a query, the run it started; with a bulk action
 * (src/runs/bulk-runs.ts), its answer (`answer`; null while the action runs) and no run.
 */
export class IdempotencyKey extends Model<InferAttributes<IdempotencyKey>, InferCreationAttributes<IdempotencyKey>> {
  declare user_uid: string;
  declare key: string;
  declare request_hash: string;
  declare run_uid: string | null;
  declare answer: CreationOptional<Record<string, unknown> | null>;
  declare created_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    IdempotencyKey.init(
      {
        user_uid: { type: DataTypes.UUID, primaryKey: true },
        key: { type: DataTypes.TEXT, primaryKey: true },
        request_hash: { type: DataTypes.TEXT, allowNull: false },
        run_uid: { type: DataTypes.UUID, allowNull: true },
        answer: { type: DataTypes.JSONB, allowNull: true },
        created_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'idempotency_keys', updatedAt: false },
    );
  }
}
