import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

export type LedgerKind = 'run' | 'grant';

/**
 * Every change of a user's balance (docs/runs.md, My runs and my credits): a grant (`amount` > 0) or the charge of an ended
 * run (`amount` ≤ 0, one row per run, written in the transaction that ends it). For every user the
 * sum of `amount` is the balance. `cost` is what a run cost; `-amount` is less only when the run cost
 * more than it could hold (balances never go below 0).
 */
export class CreditLedger extends Model<InferAttributes<CreditLedger>, InferCreationAttributes<CreditLedger>> {
  declare uid: CreationOptional<string>;
  declare seq: CreationOptional<string | number>;
  declare user_uid: string;
  declare kind: LedgerKind;
  declare run_uid: CreationOptional<string | null>;
  declare cost: CreationOptional<string | number | null>;
  declare amount: string | number;
  declare balance_after: string | number;
  declare created_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    CreditLedger.init(
      {
        uid: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
        seq: { type: DataTypes.BIGINT, autoIncrement: true },
        user_uid: { type: DataTypes.UUID, allowNull: false },
        kind: { type: DataTypes.TEXT, allowNull: false },
        run_uid: { type: DataTypes.UUID, allowNull: true },
        cost: { type: DataTypes.BIGINT, allowNull: true },
        amount: { type: DataTypes.BIGINT, allowNull: false },
        balance_after: { type: DataTypes.BIGINT, allowNull: false },
        created_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'credit_ledger', updatedAt: false },
    );
  }
}
