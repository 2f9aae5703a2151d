import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

/** Membership of a circuit in a board; deleting it never deletes the circuit. */
export class BoardCircuit extends Model<InferAttributes<BoardCircuit>, InferCreationAttributes<BoardCircuit>> {
  declare board_uid: string;
  declare circuit_uid: string;
  declare created_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    BoardCircuit.init(
      {
        board_uid: { type: DataTypes.UUID, primaryKey: true },
        circuit_uid: { type: DataTypes.UUID, primaryKey: true },
        created_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'board_circuits', updatedAt: false },
    );
  }
}
