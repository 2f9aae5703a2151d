import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

export interface MetricExpression {
  name: string;
  expression: string;
}

/** A user's metric configuration: named JSONata expressions evaluated over each completed run. */
export class CircuitMetric extends Model<InferAttributes<CircuitMetric>, InferCreationAttributes<CircuitMetric>> {
  declare uid: CreationOptional<string>;
  declare user_uid: string;
  declare name: string;
  declare metrics: MetricExpression[];
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    CircuitMetric.init(
      {
        uid: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
        user_uid: { type: DataTypes.UUID, allowNull: false },
        name: { type: DataTypes.TEXT, allowNull: false },
        metrics: { type: DataTypes.JSONB, allowNull: false },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'circuit_metrics' },
    );
  }
}
