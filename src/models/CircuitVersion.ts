import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';
import type { CircuitDefinition } from '../domain/definition';

/** Immutable once published; whether it is primary is read from circuits.primary_version_uid. */
export class CircuitVersion extends Model<InferAttributes<CircuitVersion>, InferCreationAttributes<CircuitVersion>> {
  declare uid: CreationOptional<string>;
  declare circuit_uid: string;
  declare number: number;
  declare definition: CircuitDefinition;
  declare is_deprecated: CreationOptional<boolean>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    CircuitVersion.init(
      {
        uid: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
        circuit_uid: { type: DataTypes.UUID, allowNull: false },
        number: { type: DataTypes.INTEGER, allowNull: false },
        definition: { type: DataTypes.JSONB, allowNull: false },
        is_deprecated: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'circuit_versions' },
    );
  }
}
