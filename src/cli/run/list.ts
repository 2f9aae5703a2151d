import type { WhereOptions } from 'sequelize';
import { User } from '../../models';
import { CircuitRun } from '../../models/CircuitRun';
import { RUN_STATES, type RunState } from '../../domain/runs';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findCircuitArg, findUser, restRun } from '../present';
import { pageWindow } from '../options';
import { CliError, type ListOutput } from '../output';

export interface RunListOptions {
  username?: string;
  state?: string;
  circuit?: string;
  limit: number;
  page: number;
}

/** What `run list --table` shows of each run. */
export const RUN_LIST_COLUMNS = [
  'uid',
  'username',
  'state',
  'circuit_uid',
  'created_at',
  'ended_at',
  'credits_cost',
  'failure_reason',
] as const;

/** Runs of every user, newest first, each as `run show` prints it; filters combine. */
export async function runList(io: CliIo, options: RunListOptions): Promise<ListOutput> {
  const window = pageWindow(options, 1000);
  const state = options.state?.toUpperCase();
  if (state !== undefined && !(RUN_STATES as readonly string[]).includes(state))
    throw new CliError(`--state must be one of ${RUN_STATES.join(', ')}`);
  return withDatabase(io, async () => {
    const user = options.username === undefined ? null : await findUser(options.username);
    const circuit = options.circuit === undefined ? null : await findCircuitArg(options.circuit, options.username);
    const where: WhereOptions<CircuitRun> = {
      ...(user ? { user_uid: user.uid } : {}),
      ...(state ? { state: state as RunState } : {}),
      ...(circuit ? { circuit_uid: circuit.uid } : {}),
    };
    const { rows, count } = await CircuitRun.findAndCountAll({
      where,
      order: [
        ['created_at', 'DESC'],
        ['uid', 'DESC'],
      ],
      ...window,
    });
    const owners = await User.findAll({
      where: { uid: [...new Set(rows.map((run) => run.user_uid))] },
      attributes: ['uid', 'username'],
    });
    const usernames = new Map(owners.map((owner) => [owner.uid, owner.username]));
    return {
      meta: { total_count: count, limit: window.limit, page: options.page },
      data: rows.map((run) => restRun(run, usernames.get(run.user_uid) ?? '')),
    };
  });
}
