import { RunResolver } from './run.resolver';
import { RunReplayResolver } from './run-replay.resolver';
import { RunEstimateResolver } from './run-estimate.resolver';
import { RunBulkResolver } from './run-bulk.resolver';

/** Resolvers of the run domain. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const runResolvers: Function[] = [RunResolver, RunReplayResolver, RunEstimateResolver, RunBulkResolver];
