import fs from 'node:fs';
import path from 'node:path';
import type * as UploadBlob from '../../commands/upload-blob';
import type * as Storage from '../../storage';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findUser } from '../present';
import { restBlob } from './present';
import { CliError } from '../output';

export interface BlobUploadOptions {
  username: string;
}

/** Stores a file as a blob owned by the user (the same path as the /settings upload). */
export async function blobUpload(io: CliIo, file: string, options: BlobUploadOptions) {
  let data: Buffer;
  try {
    data = fs.readFileSync(path.resolve(file));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(
      `cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (error as Error).message}`,
    );
  }
  // Loaded here, not at start: the storage clients are heavy and only this command needs them.
  const { uploadBlob } = require('../../commands/upload-blob') as typeof UploadBlob;
  const { createBlobStorage } = require('../../storage') as typeof Storage;
  return withDatabase(io, async ({ config }) => {
    const owner = await findUser(options.username);
    const storage = createBlobStorage(config);
    const blob = await uploadBlob(storage, owner, { filename: path.basename(file), data });
    return restBlob(blob);
  });
}
