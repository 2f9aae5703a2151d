import path from 'node:path';
import type { Config } from '../config';
import type { BlobStorage } from './BlobStorage';
import type * as Gcs from './GcsStorage';
import { LocalStorage } from './LocalStorage';
import { resolveSecret } from './secret';

export type { BlobStorage, SignedUrlOptions } from './BlobStorage';
export { storagePath } from './BlobStorage';
export { LocalStorage, LOCAL_BUCKET, LOCAL_CONTENT_PATH } from './LocalStorage';

/**
 * GCS when GCS_BUCKET is set (standard Google credentials), else `${dataDir}/blobs`. The GCS client
 * (~0.2 s to load) is loaded only then.
 */
export function createBlobStorage(config: Config): BlobStorage {
  if (config.gcsBucket) {
    const { GcsStorage } = require('./GcsStorage') as typeof Gcs;
    return new GcsStorage({
      bucket: config.gcsBucket,
      maxBytes: config.blobMaxBytes,
      urlTtlSeconds: config.blobUrlTtlSeconds,
    });
  }
  return new LocalStorage({
    dir: path.join(config.dataDir, 'blobs'),
    secret: resolveSecret(config),
    maxBytes: config.blobMaxBytes,
    urlTtlSeconds: config.blobUrlTtlSeconds,
  });
}
