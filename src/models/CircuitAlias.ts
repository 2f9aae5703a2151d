import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

/** One weighted route of an alias: runs drawn to it run `version_uid`. */
export interface AliasRoute {
  version_uid: string;
  weight: number;
}

/** A named, weighted pointer to versions of a circuit (docs/releases.md); written by src/commands/set-circuit-alias.ts. */
export class CircuitAlias extends Model<InferAttributes<CircuitAlias>, InferCreationAttributes<CircuitAlias>> {
  declare circuit_uid: string;
  declare name: string;
  declare routes: AliasRoute[];
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    CircuitAlias.init(
      {
        circuit_uid: { type: DataTypes.UUID, primaryKey: true },
        name: { type: DataTypes.TEXT, primaryKey: true },
        routes: { type: DataTypes.JSONB, allowNull: false },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'circuit_aliases' },
    );
  }
}
