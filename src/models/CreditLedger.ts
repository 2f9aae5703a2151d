import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

/**
 * One row per ended run: what it cost and what was taken from the balance. `amount` is less than
 * `cost` only when the balance ran out (balances never go below 0).
 */
export class CreditLedger extends Model<InferAttributes<CreditLedger>, InferCreationAttributes<CreditLedger>> {
  declare uid: CreationOptional<string>;
  declare user_uid: string;
  declare run_uid: string;
  declare cost: string | number;
  declare amount: string | number;
  declare balance_after: string | number;
  declare created_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    CreditLedger.init(
      {
        uid: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
        user_uid: { type: DataTypes.UUID, allowNull: false },
        run_uid: { type: DataTypes.UUID, allowNull: false },
        cost: { type: DataTypes.BIGINT, allowNull: false },
        amount: { type: DataTypes.BIGINT, allowNull: false },
        balance_after: { type: DataTypes.BIGINT, allowNull: false },
        created_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'credit_ledger', updatedAt: false },
    );
  }
}
