import { Sequelize } from 'sequelize';
import { CircuitRun } from './CircuitRun';
import { CreditLedger } from './CreditLedger';
import { IdempotencyKey } from './IdempotencyKey';
import { RunEvent } from './RunEvent';

export { CircuitRun, CreditLedger, IdempotencyKey, RunEvent };

/** Binds the runs domain's models. */
export function initRunModels(sequelize: Sequelize): void {
  CircuitRun.initModel(sequelize);
  CreditLedger.initModel(sequelize);
  IdempotencyKey.initModel(sequelize);
  RunEvent.initModel(sequelize);
}
