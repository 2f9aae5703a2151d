import { Sequelize } from 'sequelize';
import { User } from './User';
import { ApiToken } from './ApiToken';
import { CircuitMetric } from './CircuitMetric';
import { Circuit } from './Circuit';
import { CircuitAdaptor } from './CircuitAdaptor';
import { CircuitVersion } from './CircuitVersion';
import { CircuitStar } from './CircuitStar';
import { CircuitEmbed } from './CircuitEmbed';
import { CircuitAlias } from './CircuitAlias';
import { CircuitAliasHistory } from './CircuitAliasHistory';
import { initRunModels } from './runs';
import { initBoardModels } from './boards';
import { initBlobModels } from './blobs';

export {
  User,
  ApiToken,
  CircuitMetric,
  Circuit,
  CircuitAdaptor,
  CircuitVersion,
  CircuitStar,
  CircuitEmbed,
  CircuitAlias,
  CircuitAliasHistory,
};
export type { AliasRoute } from './CircuitAlias';

/**
 * Binds every model to one Sequelize instance. Models are module-level classes, so a process holds
 * one database at a time (tests start one app per test file, each in its own jest worker).
 */
export function initModels(sequelize: Sequelize): void {
  for (const model of [
    User,
    ApiToken,
    CircuitMetric,
    Circuit,
    CircuitAdaptor,
    CircuitVersion,
    CircuitStar,
    CircuitEmbed,
    CircuitAlias,
    CircuitAliasHistory,
  ]) {
    model.initModel(sequelize);
  }
  initRunModels(sequelize);
  initBoardModels(sequelize);
  initBlobModels(sequelize);
}
