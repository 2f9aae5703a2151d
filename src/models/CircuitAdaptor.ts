import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

/** The entry point a query is posted to; every circuit gets one default adaptor of kind `query`. */
export class CircuitAdaptor extends Model<InferAttributes<CircuitAdaptor>, InferCreationAttributes<CircuitAdaptor>> {
  declare uid: CreationOptional<string>;
  declare circuit_uid: string;
  declare kind: CreationOptional<string>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    CircuitAdaptor.init(
      {
        uid: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
        circuit_uid: { type: DataTypes.UUID, allowNull: false },
        kind: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'query' },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'circuit_adaptors' },
    );
  }
}
