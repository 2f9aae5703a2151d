import crypto from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import mime from 'mime-types';
import type { User } from '../models';
import { Blob } from '../models/blobs';
import type { BlobStorage } from '../storage';
import { AppError, badInput } from '../errors';

export interface UploadedFile {
  filename: string;
  data: Buffer;
}

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
  return (
    path
      .basename(filename.replace(/\\/g, '/'))
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u001f\u007f]/g, '')
      .slice(0, 255)
  );
}

export function tooLarge(maxBytes: number): AppError {
  return new AppError('PayloadTooLarge', `The file is larger than the limit of ${maxBytes} bytes`, { maxBytes });
}

/** Bytes file-type reads to sniff a type: the head of a streamed upload is held for that, no more. */
const SNIFF_BYTES = 4100;

/**
 * Stores a file read from a stream and records it, as uploadBlob does, without holding it: the first
 * few KiB are kept to sniff its type, then every chunk goes to the storage as it arrives (with
 * back-pressure), hashed and counted on the way. More than `storage.maxBytes` fails the store
 * (PayloadTooLarge) and leaves nothing behind.
 */
export async function uploadBlobStream(
  storage: BlobStorage,
  owner: User,
  file: { filename: string; stream: Readable },
): Promise<Blob> {
  const filename = cleanFilename(file.filename);
  const source = file.stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head: Buffer[] = [];
  let headBytes = 0;
  let ended = false;
  while (headBytes < SNIFF_BYTES) {
    const next = await source.next();
    if (next.done) {
      ended = true;
      break;
    }
    head.push(next.value);
    headBytes += next.value.length;
  }
  if (headBytes === 0) throw badInput('The file is empty', { field: 'file' });
  const mimeType = await detectMimeType(Buffer.concat(head).subarray(0, SNIFF_BYTES), filename);
  const hash = crypto.createHash('sha256');
  let bytes = 0;
  const count = (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > storage.maxBytes) throw tooLarge(storage.maxBytes);
    hash.update(chunk);
    return chunk;
  };
  async function* content(): AsyncGenerator<Buffer> {
    for (const chunk of head) yield count(chunk);
    head.length = 0;
    if (ended) return;
    for (let next = await source.next(); !next.done; next = await source.next()) yield count(next.value);
  }

  const uid = crypto.randomUUID();
  await storage.put(uid, Readable.from(content(), { objectMode: false }), mimeType);
  try {
    return await Blob.create({
      uid,
      user_uid: owner.uid,
      filename,
      hash: hash.digest('hex'),
      bytes,
      mime_type: mimeType,
      blob_type: storage.type,
      bucket: storage.bucket,
    });
  } catch (error) {
    await storage.delete(uid).catch(() => undefined);
    throw error;
  }
}

/**
 * Stores a file and records it: the content is stored first, then the metadata row is
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
