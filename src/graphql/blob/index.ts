import { BlobResolver } from './blob.resolver';

/** Resolvers of the blob domain. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const blobResolvers: Function[] = [BlobResolver];
