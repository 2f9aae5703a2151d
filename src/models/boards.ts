import { Sequelize } from 'sequelize';

/** Binds the boards domain's models (see the issue that owns them). */
export function initBoardModels(_sequelize: Sequelize): void {}
