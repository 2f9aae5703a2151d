import type { Blob } from '../../models/blobs';
import { blobView } from '../../views/blob.view';
import { snakeKeys } from '../../views/snake-keys';

/**
 * The blob as REST returns it (fragment RestBlob), with `blob_type` and `path` as an admin token
 * sees them: the operator at the CLI already has the storage in hand. Kept apart from
 * src/cli/present.ts: blob views load the storage clients, which only the blob commands need.
 */
export function restBlob(blob: Blob) {
  const { filename: _filename, ...view } = blobView(blob, 'operator');
  return snakeKeys(view);
}
