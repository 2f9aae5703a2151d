import { Sequelize } from 'sequelize';

/** Binds the blobs domain's models (see the issue that owns them). */
export function initBlobModels(_sequelize: Sequelize): void {}
