import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

/** An `Idempotency-Key` a caller sent with a query, and the run it started (valid for 24 hours). */
export class IdempotencyKey extends Model<InferAttributes<IdempotencyKey>, InferCreationAttributes<IdempotencyKey>> {
  declare user_uid: string;
  declare key: string;
  declare request_hash: string;
  declare run_uid: string;
  declare created_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    IdempotencyKey.init(
      {
        user_uid: { type: DataTypes.UUID, primaryKey: true },
        key: { type: DataTypes.TEXT, primaryKey: true },
        request_hash: { type: DataTypes.TEXT, allowNull: false },
        run_uid: { type: DataTypes.UUID, allowNull: false },
        created_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'idempotency_keys', updatedAt: false },
    );
  }
}
