import { Circuit } from '../../models';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findUser, restCircuits } from '../present';
import { pageWindow } from '../options';
import type { ListOutput } from '../output';

export interface CircuitListOptions {
  username?: string;
  limit: number;
  page: number;
}

/** What `circuit list --table` shows of each circuit. */
export const CIRCUIT_COLUMNS = ['username', 'name', 'uid', 'is_private', 'primary_version_uid', 'created_at'] as const;

/** Circuits newest first, private ones included, each in the REST shape of `circuit create`. */
export async function circuitList(io: CliIo, options: CircuitListOptions): Promise<ListOutput> {
  const window = pageWindow(options, 1000);
  return withDatabase(io, async () => {
    const owner = options.username === undefined ? null : await findUser(options.username);
    const { rows, count } = await Circuit.findAndCountAll({
      where: owner ? { owner_uid: owner.uid } : {},
      order: [
        ['created_at', 'DESC'],
        ['uid', 'ASC'],
      ],
      ...window,
    });
    return { meta: { total_count: count, limit: window.limit, page: options.page }, data: await restCircuits(rows) };
  });
}
