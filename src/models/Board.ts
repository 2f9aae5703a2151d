import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

/** A named collection of circuits, unique per owner. */
export class Board extends Model<InferAttributes<Board>, InferCreationAttributes<Board>> {
  declare uid: CreationOptional<string>;
  declare owner_uid: string;
  declare name: string;
  declare description: CreationOptional<string>;
  declare is_private: CreationOptional<boolean>;
  /** Protected from being copied. */
  declare is_protected: CreationOptional<boolean>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    Board.init(
      {
        uid: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
        owner_uid: { type: DataTypes.UUID, allowNull: false },
        name: { type: DataTypes.TEXT, allowNull: false },
        description: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
        is_private: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        is_protected: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'boards' },
    );
  }
}
