import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';
import type { AliasRoute } from './CircuitAlias';

/** A route set an alias had before: put at `set_at`, replaced at `replaced_at`. */
export class CircuitAliasHistory extends Model<
  InferAttributes<CircuitAliasHistory>,
  InferCreationAttributes<CircuitAliasHistory>
> {
  declare uid: CreationOptional<string>;
  declare circuit_uid: string;
  declare name: string;
  declare routes: AliasRoute[];
  declare set_at: Date;
  declare replaced_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    CircuitAliasHistory.init(
      {
        uid: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
        circuit_uid: { type: DataTypes.UUID, allowNull: false },
        name: { type: DataTypes.TEXT, allowNull: false },
        routes: { type: DataTypes.JSONB, allowNull: false },
        set_at: { type: DataTypes.DATE, allowNull: false },
        replaced_at: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'circuit_alias_history', timestamps: false },
    );
  }
}
