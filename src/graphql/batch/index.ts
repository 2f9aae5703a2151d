import { BatchResolver } from './batch.resolver';

/** Resolvers of the batch domain (docs/batches-and-budgets.md). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const batchResolvers: Function[] = [BatchResolver];
