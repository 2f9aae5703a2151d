import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { Config } from '../../config';
import type { User } from '../../models';
import { withDatabase } from '../database';
import { lazyRequire } from '../lazy';
import { findUser, restBlob } from '../present';
import { CliError, printJson } from '../output';

interface UploadBlobModule {
  uploadBlob(storage: unknown, owner: User, file: { filename: string; data: Buffer }): Promise<unknown>;
}
interface StorageModule { createBlobStorage(config: Config): unknown }

export interface BlobUploadOptions { username: string }

/** Stores a file as a blob owned by the user (the same path as the /settings upload). */
export async function blobUpload(file: string, options: BlobUploadOptions) {
  let data: Buffer;
  try {
    data = fs.readFileSync(path.resolve(file));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(`cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (error as Error).message}`);
  }
  const { uploadBlob } = lazyRequire<UploadBlobModule>('commands/uploadBlob', 'blob upload');
  const { createBlobStorage } = lazyRequire<StorageModule>('storage', 'blob storage');
  return withDatabase(async ({ config }) => {
    const owner = await findUser(options.username);
    const storage = await createBlobStorage(config);
    const blob = await uploadBlob(storage, owner, { filename: path.basename(file), data });
    return restBlob(blob);
  });
}

export function register(parent: Command): void {
  parent
    .command('upload')
    .description('upload a file as a blob owned by a user')
    .requiredOption('--username <username>', 'the owner')
    .argument('<file>', 'the file to store')
    .action(async (file: string, options: BlobUploadOptions) => printJson(await blobUpload(file, options)));
}
