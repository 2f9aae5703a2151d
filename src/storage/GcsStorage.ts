import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Storage, StorageOptions } from '@google-cloud/storage';
import type { BlobStorage, SignedUrlOptions } from './BlobStorage';

export interface GcsStorageOptions {
  bucket: string;
  maxBytes: number;
  urlTtlSeconds: number;
  /**
   * Passed to the client: credentials ({client_email, private_key}), projectId, or `apiEndpoint`
   * for an emulator. Empty means the standard Google credentials of the environment.
   */
  storageOptions?: StorageOptions;
}

/** Blob content in a Google Cloud Storage bucket, one object per uid; downloads are v4 signed URLs. */
export class GcsStorage implements BlobStorage {
  readonly type = 'gcs' as const;
  readonly bucket: string;
  readonly maxBytes: number;
  readonly urlTtlSeconds: number;
  readonly client: Storage;

  constructor(options: GcsStorageOptions) {
    this.bucket = options.bucket;
    this.maxBytes = options.maxBytes;
    this.urlTtlSeconds = options.urlTtlSeconds;
    this.client = new Storage(options.storageOptions ?? {});
  }

  private file(uid: string) {
    return this.client.bucket(this.bucket).file(uid);
  }

  async put(uid: string, data: Buffer | Readable, contentType: string | null): Promise<void> {
    // A single-request upload is atomic: the object exists completely or not at all.
    const options = {
      resumable: false,
      validation: 'md5' as const,
      contentType: contentType ?? 'application/octet-stream',
      preconditionOpts: { ifGenerationMatch: 0 },
    };
    if (Buffer.isBuffer(data)) await this.file(uid).save(data, options);
    else await pipeline(data, this.file(uid).createWriteStream(options));
  }

  async read(uid: string): Promise<Buffer> {
    const [content] = await this.file(uid).download();
    return content;
  }

  async delete(uid: string): Promise<void> {
    await this.file(uid).delete({ ignoreNotFound: true });
  }

  async signedUrl(uid: string, { ttlSeconds = this.urlTtlSeconds }: SignedUrlOptions): Promise<string> {
    const [url] = await this.file(uid).getSignedUrl({
      version: 'v4',
      action: 'read',
      expires: Date.now() + ttlSeconds * 1000,
    });
    return url;
  }
}
