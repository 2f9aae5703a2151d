import { Blob } from '../../models/blobs';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findUser } from '../present';
import { restBlob } from './present';
import { CliError } from '../output';

export interface BlobListOptions {
  username: string;
  limit: number;
  page: number;
}

/** A user's blobs, newest first, in the REST list shape (with storage paths, as for an admin). */
export async function blobList(io: CliIo, options: BlobListOptions) {
  if (options.limit > 100) throw new CliError('--limit must be at most 100');
  return withDatabase(io, async () => {
    const owner = await findUser(options.username);
    const { rows, count } = await Blob.findAndCountAll({
      where: { user_uid: owner.uid },
      order: [
        ['created_at', 'DESC'],
        ['uid', 'ASC'],
      ],
      limit: options.limit,
      offset: (options.page - 1) * options.limit,
    });
    return { meta: { total_count: count, limit: options.limit, page: options.page }, data: rows.map(restBlob) };
  });
}
