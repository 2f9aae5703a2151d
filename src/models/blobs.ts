import { Sequelize } from 'sequelize';
import { Blob } from './Blob';

export { Blob };

/** Binds the blobs domain's models. */
export function initBlobModels(sequelize: Sequelize): void {
  Blob.initModel(sequelize);
}
