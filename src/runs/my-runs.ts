import { CircuitRun } from '../models/CircuitRun';
import { type RunState } from '../domain/runs';
import { labelFilterWhere, type RunLabelFilter } from './run-labels';

/** What "my runs" may be filtered by (docs/runs.md, My runs and my credits; docs/batches-and-budgets.md). */
export interface MyRunsFilter extends RunLabelFilter {
  state?: RunState | null;
  circuitUid?: string | null;
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
    where: {
      user_uid: userUid,
      ...(filter.state ? { state: filter.state } : {}),
      ...(filter.circuitUid ? { circuit_uid: filter.circuitUid } : {}),
      ...labelFilterWhere(filter),
    },
    attributes: { exclude: ['input'] },
    order: [
      ['created_at', 'DESC'],
      ['uid', 'DESC'],
    ],
    limit: window.limit,
    offset: window.offset,
  });
}
