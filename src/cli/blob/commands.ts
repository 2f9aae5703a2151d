import type { Command } from 'commander';
import type { CliIo } from '../io';
import { implementation } from '../lazy';
import { positiveInteger } from '../options';
import { printJson } from '../output';
import type * as UploadModule from './upload';
import type * as ListModule from './list';

export function register(blob: Command, io: CliIo): void {
  blob
    .command('upload')
    .description('upload a file as a blob owned by a user')
    .requiredOption('--username <username>', 'the owner')
    .argument('<file>', 'the file to store')
    .action(async (file: string, options: UploadModule.BlobUploadOptions) => {
      const { blobUpload } = implementation(() => require('./upload') as typeof UploadModule);
      printJson(io, await blobUpload(io, file, options));
    });
  blob
    .command('list')
    .description("list a user's blobs, newest first")
    .requiredOption('--username <username>', 'the owner')
    .option('--limit <n>', 'blobs per page (1-100)', positiveInteger, 10)
    .option('--page <n>', '1-based page', positiveInteger, 1)
    .action(async (options: ListModule.BlobListOptions) => {
      const { blobList } = implementation(() => require('./list') as typeof ListModule);
      printJson(io, await blobList(io, options));
    });
}
