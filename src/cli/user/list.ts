import { Op, type WhereOptions } from 'sequelize';
import { User } from '../../models';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { restUser } from '../present';
import { pageWindow } from '../options';
import type { ListOutput } from '../output';

export interface UserListOptions {
  search?: string;
  admin?: boolean;
  limit: number;
  page: number;
}

/** What `user list --table` shows of each user. */
export const USER_COLUMNS = ['username', 'uid', 'is_admin', 'credits', 'credits_held', 'created_at'] as const;

/** Users oldest first (then by uid), in the `{ meta, data }` list shape, each as `user show`'s profile. */
export async function userList(io: CliIo, options: UserListOptions): Promise<ListOutput> {
  const window = pageWindow(options, 1000);
  return withDatabase(io, async () => {
    const where: WhereOptions = {
      ...(options.admin ? { is_admin: true } : {}),
      // Usernames are [a-z0-9_-]; LIKE's own wildcards in the text are matched literally.
      ...(options.search !== undefined
        ? { username: { [Op.like]: `%${options.search.toLowerCase().replace(/[\\%_]/g, '\\$&')}%` } }
        : {}),
    };
    const { rows, count } = await User.findAndCountAll({
      where,
      order: [
        ['created_at', 'ASC'],
        ['uid', 'ASC'],
      ],
      ...window,
    });
    return { meta: { total_count: count, limit: options.limit, page: options.page }, data: rows.map(restUser) };
  });
}
