import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

export class BoardStar extends Model<InferAttributes<BoardStar>, InferCreationAttributes<BoardStar>> {
  declare user_uid: string;
  declare board_uid: string;
  declare created_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    BoardStar.init(
      {
        user_uid: { type: DataTypes.UUID, primaryKey: true },
        board_uid: { type: DataTypes.UUID, primaryKey: true },
        created_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'board_stars', updatedAt: false },
    );
  }
}
