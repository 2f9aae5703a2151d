import { Sequelize } from 'sequelize';

/** Binds the runs domain's models (see the issue that owns them). */
export function initRunModels(_sequelize: Sequelize): void {}
