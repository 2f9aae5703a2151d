import {
  CreationOptional,
  DataTypes,
  InferAttributes,
  InferCreationAttributes,
  Model,
  QueryTypes,
  Sequelize,
} from 'sequelize';

/** A stored file. The content lives in the blob storage under the blob's uid. */
type Computed = 'byteCount' | 'readCount';

export class Blob extends Model<
  InferAttributes<Blob, { omit: Computed }>,
  InferCreationAttributes<Blob, { omit: Computed }>
> {
  declare uid: CreationOptional<string>;
  declare user_uid: string;
  /** The uploaded file's name, for display and download. */
  declare filename: CreationOptional<string>;
  /** SHA-256 of the content, hex. */
  declare hash: string;
  /** BIGINT arrives from pg as a string; read it through `byteCount`. */
  declare bytes: string | number;
  declare mime_type: CreationOptional<string | null>;
  /** Storage backend code (`gcs` or `local`) and the bucket the content was written to. */
  declare blob_type: string;
  declare bucket: string;
  declare total_reads: CreationOptional<string | number>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;

  get byteCount(): number {
    return Number(this.getDataValue('bytes'));
  }

  get readCount(): number {
    return Number(this.getDataValue('total_reads'));
  }

  /**
   * Counts one metadata read and returns the blob as it is after it, in one statement, so
   * concurrent reads never lose a count. Null when no blob has the uid.
   */
  static async recordRead(uid: string): Promise<Blob | null> {
    const rows = await Blob.sequelize!.query(
      'UPDATE blobs SET total_reads = total_reads + 1 WHERE uid = $1 RETURNING *',
      { bind: [uid], type: QueryTypes.SELECT, model: Blob, mapToModel: true },
    );
    return rows[0] ?? null;
  }

  static initModel(sequelize: Sequelize): void {
    Blob.init(
      {
        uid: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
        user_uid: { type: DataTypes.UUID, allowNull: false },
        filename: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
        hash: { type: DataTypes.TEXT, allowNull: false },
        bytes: { type: DataTypes.BIGINT, allowNull: false },
        mime_type: { type: DataTypes.TEXT, allowNull: true },
        blob_type: { type: DataTypes.TEXT, allowNull: false },
        bucket: { type: DataTypes.TEXT, allowNull: false },
        total_reads: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { sequelize, tableName: 'blobs' },
    );
  }
}
