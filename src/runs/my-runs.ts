import { Op, type WhereOptions } from 'sequelize';
import { CircuitRun } from '../models/CircuitRun';
import { RUN_STATES, type RunState } from '../domain/runs';
import { badInput } from '../errors';
import { isUid } from '../ids';
import { labelFilterWhere, type RunLabelFilter } from './run-labels';

/** What "my runs" may be filtered by (docs/runs.md, My runs and my credits; docs/batches-and-budgets.md). */
export interface MyRunsFilter extends RunLabelFilter {
  state?: RunState | null;
  circuitUid?: string | null;
  batchUid?: string | null;
}

/**
 * The conditions of a filter of the caller's runs, checked: the one reading of a filter for the list
 * (findMyRuns) and for the actions on the runs it matches (src/runs/bulk-runs.ts). `prefix` is put before
 * the field a 400 names (`filter.` in a bulk action's body).
 */
export function myRunsWhere(userUid: string, filter: MyRunsFilter, prefix = ''): WhereOptions {
  if (filter.state != null && !(RUN_STATES as readonly string[]).includes(filter.state))
    throw badInput(`${prefix}state must be one of ${RUN_STATES.join(', ')}`, { field: `${prefix}state` });
  if (filter.circuitUid != null && !isUid(filter.circuitUid))
    throw badInput(`${prefix}circuit_uid must be a circuit uid`, { field: `${prefix}circuit_uid` });
  if (filter.batchUid != null && !isUid(filter.batchUid))
    throw badInput(`${prefix}batch_uid must be a batch uid`, { field: `${prefix}batch_uid` });
  return {
    user_uid: userUid,
    ...(filter.state ? { state: filter.state } : {}),
    ...(filter.circuitUid ? { circuit_uid: filter.circuitUid } : {}),
    ...(filter.batchUid ? { batch_uid: filter.batchUid } : {}),
    ...labelFilterWhere(filter, prefix),
  };
}

/** `where` and the runs in one of `states` (none when the filter's own state is another). */
export function inStates(where: WhereOptions, states: readonly RunState[]): WhereOptions {
  return { [Op.and]: [where, { state: [...states] }] };
}

/**
 * A user's own runs in any state, newest first: the one query behind GraphQL `viewer.runs`, REST
 * `GET /users/circuit-runs` and the /settings Runs page. Inputs are never read for a list.
 */
export async function findMyRuns(
  userUid: string,
  filter: MyRunsFilter,
  window: { limit: number; offset: number },
): Promise<{ rows: CircuitRun[]; count: number }> {
  return CircuitRun.findAndCountAll({
    where: myRunsWhere(userUid, filter),
    attributes: { exclude: ['input'] },
    order: [
      ['created_at', 'DESC'],
      ['uid', 'DESC'],
    ],
    limit: window.limit,
    offset: window.offset,
  });
}

/** How many of a user's runs of a filter are in flight (PROVISIONED, RUNNING) and how many have ended: what a cancel or a replay by filter would match. */
export async function countMyRuns(userUid: string, filter: MyRunsFilter): Promise<{ inFlight: number; ended: number }> {
  const where = myRunsWhere(userUid, filter);
  const [inFlight, ended] = await Promise.all([
    CircuitRun.count({ where: inStates(where, ['PROVISIONED', 'RUNNING']) }),
    CircuitRun.count({ where: inStates(where, ['COMPLETED', 'EXCEPTION']) }),
  ]);
  return { inFlight, ended };
}
