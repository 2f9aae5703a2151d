import type { User } from '../models';
import type { Blob } from '../models/blobs';
import { blobPermits } from '../policies/blob.policy';
import { storagePath } from '../storage';

/**
 * The API view of a blob as `viewer` may see it (storage fields for admins only). `'operator'`: the
 * operator at the CLI, who has the storage in hand, sees them as an admin would.
 */
export function blobView(blob: Blob, viewer: User | null | 'operator') {
  const seeStorage = viewer === 'operator' || blobPermits(viewer, blob, 'seeStorage');
  if (viewer === 'operator') viewer = null;
  return {
    uid: blob.uid,
    blobType: seeStorage ? blob.blob_type : null,
    path: seeStorage ? storagePath(blob.blob_type, blob.bucket, blob.uid) : null,
    hash: blob.hash,
    userUid: blob.user_uid,
    createdAt: blob.created_at,
    canDelete: blobPermits(viewer, blob, 'delete'),
    bytes: blob.byteCount,
    totalReads: blob.readCount,
    mimeType: blob.mime_type ?? null,
    filename: blob.filename,
  };
}
