import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { authChecker, rejectInvalidToken } from './auth-checker';
import { noticesFromSubjects } from './notices';
import { resolvers } from './resolvers';
import { runPubSub } from '../events/pubsub';
import { withOperationCosts } from './operation-cost';

let built: Promise<GraphQLSchema> | undefined;

/**
 * The one schema behind /graphql, the REST bridge and /graphql/stream, with each field's cost
 * attached (operation-cost.ts) so every transport can bound an operation before executing it.
 */
export function getSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({
    resolvers,
    authChecker,
    authMode: 'error',
    globalMiddlewares: [rejectInvalidToken, noticesFromSubjects],
    validate: { forbidUnknownValues: false },
    pubSub: runPubSub,
  }).then(withOperationCosts);
  return built;
}
