import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

export class Circuit extends Model<InferAttributes<Circuit>, InferCreationAttributes<Circuit>> {
  declare uid: CreationOptional<string>;
  declare owner_uid: string;
  declare name: string;
  declare description: CreationOptional<string>;
  declare is_private: CreationOptional<boolean>;
  declare is_protected: CreationOptional<boolean>;
  declare license_type: CreationOptional<string | null>;
  declare user_circuit_metric_uid: CreationOptional<string | null>;
  declare is_deprecated: CreationOptional<boolean>;
  declare deprecated_at: CreationOptional<Date | null>;
  declare star_count: CreationOptional<number>;
  declare primary_version_uid: CreationOptional<string | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    Circuit.init(
      {
        uid: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
        owner_uid: { type: DataTypes.UUID, allowNull: false },
        name: { type: DataTypes.TEXT, allowNull: false },
        description: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
        is_private: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        is_protected: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        license_type: { type: DataTypes.TEXT, allowNull: true },
        user_circuit_metric_uid: { type: DataTypes.UUID, allowNull: true },
        is_deprecated: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        deprecated_at: { type: DataTypes.DATE, allowNull: true },
        star_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        primary_version_uid: { type: DataTypes.UUID, allowNull: true },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'circuits' },
    );
  }
}
