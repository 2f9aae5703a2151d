import type { Sequelize } from 'sequelize';
import type { Logger } from '../logger';
import type { RunQueue } from '../queue/agenda';
import type { JsonSchemaService } from '../engine/json-schemas';
import type { RunWing } from '../runs';

/** What schedules receive from the composition (src/runtime.ts). */
export interface ScheduleDeps {
  sequelize: Sequelize;
  log: Logger;
  /** Each active schedule's repeating job (`fireSchedule`), and which schedules lack one. */
  queue: Pick<RunQueue, 'repeat' | 'cancel' | 'withoutJob'>;
  /** The query schemas a schedule's input is checked against. */
  schemas: Pick<JsonSchemaService, 'inputs'>;
  /** A fire is an ordinary run. */
  runs: Pick<RunWing, 'create'>;
}
