import type { NonEmptyArray } from 'type-graphql';
import { userResolvers } from './user';
import { circuitResolvers } from './circuit';
import { runResolvers } from './run';
import { boardResolvers } from './board';
import { searchResolvers } from './search';
import { blobResolvers } from './blob';
import { webhookResolvers } from './webhook';
import { scheduleResolvers } from './schedule';
import { batchResolvers } from './batch';

/** Every resolver of the schema, grouped by domain; each domain's index lists its own. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const resolvers: NonEmptyArray<Function> = [
  ...userResolvers,
  ...circuitResolvers,
  ...runResolvers,
  ...boardResolvers,
  ...searchResolvers,
  ...blobResolvers,
  ...webhookResolvers,
  ...scheduleResolvers,
  ...batchResolvers,
];
