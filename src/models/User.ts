import {
  CreationOptional,
  DataTypes,
  InferAttributes,
  InferCreationAttributes,
  Model,
  NonAttribute,
  Sequelize,
} from 'sequelize';
import type { TokenGrant } from '../domain/token-grant';

export class User extends Model<
  InferAttributes<User, { omit: 'creditBalance' }>,
  InferCreationAttributes<User, { omit: 'creditBalance' }>
> {
  declare uid: CreationOptional<string>;
  declare username: string;
  declare name: CreationOptional<string>;
  declare bio: CreationOptional<string>;
  declare is_private: CreationOptional<boolean>;
  declare is_admin: CreationOptional<boolean>;
  /** BIGINT arrives from pg as a string; read it through `creditBalance`. */
  declare credits: CreationOptional<string | number>;
  /** What the user's in-flight runs have reserved of `credits` (src/credits/holds.ts). */
  declare credits_held: CreationOptional<string | number>;
  declare password_hash: CreationOptional<string | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;
  /** Set by authenticate on the viewer of a request made with an API token: that token's limits (src/policies/token.policy.ts). */
  declare tokenGrant?: NonAttribute<TokenGrant>;

  get creditBalance(): number {
    return Number(this.getDataValue('credits'));
  }

  static initModel(sequelize: Sequelize): void {
    User.init(
      {
        uid: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
        username: { type: DataTypes.TEXT, allowNull: false },
        name: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
        bio: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
        is_private: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        is_admin: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        credits: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
        credits_held: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
        password_hash: { type: DataTypes.TEXT, allowNull: true },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'users' },
    );
  }
}
