import { BatchResolver } from './batch.resolver';

/** Resolvers of the batch domain (DESIGN §12). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const batchResolvers: Function[] = [BatchResolver];
