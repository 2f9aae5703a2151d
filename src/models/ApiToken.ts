import { CreationOptional, DataTypes, InferAttributes, InferCreationAttributes, Model, Sequelize } from 'sequelize';

export class ApiToken extends Model<InferAttributes<ApiToken>, InferCreationAttributes<ApiToken>> {
  declare uid: CreationOptional<string>;
  declare user_uid: string;
  declare token_hash: string;
  declare label: CreationOptional<string>;
  declare last_used_at: CreationOptional<Date | null>;
  declare revoked_at: CreationOptional<Date | null>;
  /** Token limits (docs/tokens.md, migration 0022): null means every scope, no expiry, any circuit, no daily cap. */
  declare scopes: CreationOptional<string[] | null>;
  declare expires_at: CreationOptional<Date | null>;
  declare circuit_uids: CreationOptional<string[] | null>;
  /** BIGINT arrives from pg as a string. */
  declare max_credits_per_day: CreationOptional<string | number | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): void {
    ApiToken.init(
      {
        uid: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
        user_uid: { type: DataTypes.UUID, allowNull: false },
        token_hash: { type: DataTypes.TEXT, allowNull: false },
        label: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
        last_used_at: { type: DataTypes.DATE, allowNull: true },
        revoked_at: { type: DataTypes.DATE, allowNull: true },
        scopes: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: true },
        expires_at: { type: DataTypes.DATE, allowNull: true },
        circuit_uids: { type: DataTypes.ARRAY(DataTypes.UUID), allowNull: true },
        max_credits_per_day: { type: DataTypes.BIGINT, allowNull: true },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'api_tokens' },
    );
  }
}
