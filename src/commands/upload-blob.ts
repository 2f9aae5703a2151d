import crypto from 'node:crypto';
import path from 'node:path';
import mime from 'mime-types';
import type { User } from '../models';
import { Blob } from '../models/blobs';
import type { BlobStorage } from '../storage';
import { AppError, badInput } from '../errors';

export interface UploadedFile { filename: string; data: Buffer }

/** The MIME type of some content: sniffed from its bytes, else guessed from its name, else null. */
export async function detectMimeType(data: Buffer, filename: string): Promise<string | null> {
  // file-type is ESM-only: loaded on first use (Node 20.19+ can require it; jest transforms it).
  // Its `./node` entry has a `default` condition, which jest's resolver needs.
  const { fileTypeFromBuffer } = await import('file-type/node');
  const sniffed = await fileTypeFromBuffer(data).catch(() => undefined);
  if (sniffed) return sniffed.mime;
  const guessed = filename ? mime.lookup(filename) : false;
  return guessed || null;
}

/** A display name: the last path segment, no control characters, at most 255 characters. */
export function cleanFilename(filename: string): string {
  // eslint-disable-next-line no-control-regex
  return path.basename(filename.replace(/\\/g, '/')).replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 255);
}

export function tooLarge(maxBytes: number): AppError {
  return new AppError('PayloadTooLarge', `The file is larger than the limit of ${maxBytes} bytes`, { maxBytes });
}

/**
 * Stores a file and records it (spec 4.5): the content is stored first, then the metadata row is
 * inserted, then the blob is returned. A failed store leaves no row; a failed insert deletes the
 * stored content again, so no row ever names missing content.
 */
export async function uploadBlob(storage: BlobStorage, owner: User, file: UploadedFile): Promise<Blob> {
  if (file.data.length > storage.maxBytes) throw tooLarge(storage.maxBytes);
  if (file.data.length === 0) throw badInput('The file is empty', { field: 'file' });
  const filename = cleanFilename(file.filename);
  const uid = crypto.randomUUID();
  const hash = crypto.createHash('sha256').update(file.data).digest('hex');
  const mimeType = await detectMimeType(file.data, filename);

  await storage.put(uid, file.data, mimeType);
  try {
    return await Blob.create({
      uid,
      user_uid: owner.uid,
      filename,
      hash,
      bytes: file.data.length,
      mime_type: mimeType,
      blob_type: storage.type,
      bucket: storage.bucket,
    });
  } catch (error) {
    await storage.delete(uid).catch(() => undefined);
    throw error;
  }
}
