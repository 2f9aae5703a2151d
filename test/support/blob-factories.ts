import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { User } from '../../src/models';
import type { Blob } from '../../src/models/blobs';
import { uploadBlob } from '../../src/commands/upload-blob';
import type { BlobStorage } from '../../src/storage';

/** A throwaway DATA_DIR for one test file (its blobs/ and secret); `remove()` in afterAll. */
export function tempDataDir(): { dir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'circuits-blobs-'));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export const sha256 = (data: Buffer | string) => crypto.createHash('sha256').update(data).digest('hex');

/** A 1×1 PNG: file-type recognises it from its bytes whatever its name. */
export const PNG_1PX = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

export async function makeBlob(
  storage: BlobStorage,
  owner: User,
  file: { filename?: string; data?: Buffer | string } = {},
): Promise<Blob> {
  const data = file.data === undefined ? crypto.randomBytes(64) : Buffer.from(file.data);
  return uploadBlob(storage, owner, { filename: file.filename ?? 'file.bin', data });
}

/** Wraps a storage so that chosen operations fail, to prove what a failure leaves behind. */
export function failingStorage(
  inner: BlobStorage,
  fail: Partial<Record<'put' | 'read' | 'delete', Error>>,
): BlobStorage {
  return {
    type: inner.type,
    bucket: inner.bucket,
    maxBytes: inner.maxBytes,
    urlTtlSeconds: inner.urlTtlSeconds,
    put: async (...args) => {
      if (fail.put) throw fail.put;
      return inner.put(...args);
    },
    read: async (...args) => {
      if (fail.read) throw fail.read;
      return inner.read(...args);
    },
    delete: async (...args) => {
      if (fail.delete) throw fail.delete;
      return inner.delete(...args);
    },
    signedUrl: (...args) => inner.signedUrl(...args),
  };
}
