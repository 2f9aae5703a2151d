import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStorage, SignedUrlOptions } from './BlobStorage';

export const LOCAL_BUCKET = 'circuit-blobs';
/** Where the service serves local blob content; see src/web/blob-content.ts. */
export const LOCAL_CONTENT_PATH = '/blob-content';

const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface LocalStorageOptions {
  /** The directory holding the content, one file per uid. */
  dir: string;
  secret: string;
  maxBytes: number;
  urlTtlSeconds: number;
  bucket?: string;
}

export type SignatureCheck = 'valid' | 'expired' | 'invalid';

/**
 * Blob content in a directory of the data dir. Writes go to a temporary file that is renamed into
 * place, so a blob is either wholly there or absent. Download URLs point at the service itself and
 * carry an expiry and an HMAC-SHA256 signature over the uid and that expiry.
 */
export class LocalStorage implements BlobStorage {
  readonly type = 'local' as const;
  readonly bucket: string;
  readonly maxBytes: number;
  readonly urlTtlSeconds: number;
  readonly dir: string;
  private readonly secret: string;

  constructor(options: LocalStorageOptions) {
    this.dir = options.dir;
    this.secret = options.secret;
    this.maxBytes = options.maxBytes;
    this.urlTtlSeconds = options.urlTtlSeconds;
    this.bucket = options.bucket ?? LOCAL_BUCKET;
  }

  /** The file of a blob; throws on anything but a uid, so no path can escape the directory. */
  filePath(uid: string): string {
    if (!UID.test(uid)) throw new Error(`not a blob uid: ${uid}`);
    return path.join(this.dir, uid.toLowerCase());
  }

  async put(uid: string, data: Buffer | Readable): Promise<void> {
    const target = this.filePath(uid);
    await fs.promises.mkdir(this.dir, { recursive: true });
    const temp = path.join(this.dir, `.tmp-${uid}-${crypto.randomBytes(6).toString('hex')}`);
    try {
      if (!Buffer.isBuffer(data)) await pipeline(data, fs.createWriteStream(temp, { flags: 'wx', mode: 0o600 }));
      const handle = await fs.promises.open(temp, Buffer.isBuffer(data) ? 'wx' : 'r+', 0o600);
      try {
        if (Buffer.isBuffer(data)) await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fs.promises.rename(temp, target);
    } catch (error) {
      await fs.promises.rm(temp, { force: true });
      throw error;
    }
  }

  async read(uid: string): Promise<Buffer> {
    return fs.promises.readFile(this.filePath(uid));
  }

  async delete(uid: string): Promise<void> {
    await fs.promises.rm(this.filePath(uid), { force: true });
  }

  async signedUrl(uid: string, { baseUrl, ttlSeconds = this.urlTtlSeconds }: SignedUrlOptions): Promise<string> {
    const expires = Math.floor(Date.now() / 1000) + ttlSeconds;
    const url = new URL(`${LOCAL_CONTENT_PATH}/${encodeURIComponent(uid)}`, baseUrl);
    url.searchParams.set('expires', String(expires));
    url.searchParams.set('signature', this.sign(uid, expires));
    return url.toString();
  }

  /** Checks a download URL's expiry and signature, in constant time. */
  checkSignature(uid: string, expires: unknown, signature: unknown, now = Date.now()): SignatureCheck {
    if (typeof expires !== 'string' || !/^\d{1,12}$/.test(expires) || typeof signature !== 'string') return 'invalid';
    const expected = Buffer.from(this.sign(uid, Number(expires)), 'hex');
    const given = Buffer.from(signature, 'hex');
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return 'invalid';
    return Number(expires) * 1000 < now ? 'expired' : 'valid';
  }

  private sign(uid: string, expires: number): string {
    return crypto
      .createHmac('sha256', this.secret)
      .update(`blob-content\n${uid.toLowerCase()}\n${expires}`)
      .digest('hex');
  }
}
