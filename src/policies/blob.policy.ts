import type { User } from '../models';
import type { Blob } from '../models/blobs';

/**
 * - `read`: the metadata and a download URL. Anyone, with or without a token.
 * - `seeStorage`: `blob_type` and `path`, which reveal the storage layout: admin/system tokens only.
 * - `delete`: nobody while deletion is unavailable, which `can_delete` reports.
 */
export type BlobAction = 'read' | 'seeStorage' | 'delete';

export function blobPermits(viewer: User | null, _blob: Blob, action: BlobAction): boolean {
  switch (action) {
    case 'read':
      return true;
    case 'seeStorage':
      return viewer?.is_admin === true;
    case 'delete':
      return false;
  }
}
