import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

export class CircuitStar extends Model<InferAttributes<CircuitStar>, InferCreationAttributes<CircuitStar>> {
  declare user_uid: string;
  declare circuit_uid: string;
  declare created_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    CircuitStar.init(
      {
        user_uid: { type: DataTypes.UUID, primaryKey: true },
        circuit_uid: { type: DataTypes.UUID, primaryKey: true },
        created_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'circuit_stars', updatedAt: false },
    );
  }
}
