import { DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

/** Written when a version is published: version `version_uid` of `circuit_uid` embeds `embedded_circuit_uid`. */
export class CircuitEmbed extends Model<InferAttributes<CircuitEmbed>, InferCreationAttributes<CircuitEmbed>> {
  declare version_uid: string;
  declare circuit_uid: string;
  declare embedded_circuit_uid: string;

  static initModel(sequelize: Sequelize): void {
    CircuitEmbed.init(
      {
        version_uid: { type: DataTypes.UUID, primaryKey: true },
        circuit_uid: { type: DataTypes.UUID, allowNull: false },
        embedded_circuit_uid: { type: DataTypes.UUID, primaryKey: true },
      },
      { sequelize, tableName: 'circuit_embeds', timestamps: false },
    );
  }
}
