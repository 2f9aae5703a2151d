import type { Readable } from 'node:stream';

/** Where blob content lives: Google Cloud Storage, or a directory of the data dir. Same contract. */
export interface BlobStorage {
  /** The backend code shown to admins as `blob_type`: `gcs` or `local`. */
  readonly type: 'gcs' | 'local';
  readonly bucket: string;
  /** The largest content `uploadBlob` accepts (config BLOB_MAX_BYTES). */
  readonly maxBytes: number;
  /** How long a signed download URL stays valid (config BLOB_URL_TTL_SECONDS). */
  readonly urlTtlSeconds: number;

  /**
   * Stores the content completely or not at all: a failed put (or a stream that errors) leaves
   * nothing behind. A stream is written as it is read, so memory holds a buffer, not the content.
   */
  put(uid: string, data: Buffer | Readable, contentType: string | null): Promise<void>;
  read(uid: string): Promise<Buffer>;
  /** Removes the content; no error when it is already gone. */
  delete(uid: string): Promise<void>;
  /**
   * A URL that reads the content until it expires. `baseUrl` is the service's own public origin,
   * used by stores whose URLs the service serves itself.
   */
  signedUrl(uid: string, options: SignedUrlOptions): Promise<string>;
}

export interface SignedUrlOptions {
  baseUrl: string;
  /** Seconds from now; defaults to `urlTtlSeconds`. */
  ttlSeconds?: number;
}

/** `<scheme>://<bucket>/<uid>` (docs/spec-decisions.md), where the scheme is `gs` for GCS and `local` otherwise. */
export function storagePath(blobType: string, bucket: string, uid: string): string {
  return `${blobType === 'gcs' ? 'gs' : blobType}://${bucket}/${uid}`;
}
