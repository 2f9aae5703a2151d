import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { authChecker } from './auth-checker';
import { withRootFieldRules } from './root-fields';
import { resolvers } from './resolvers';
import { runPubSub } from './pubsub';
import { withOperationCosts } from './operation-cost';

let built: Promise<GraphQLSchema> | undefined;

/**
 * The one schema behind /graphql, the REST bridge and /graphql/stream, with each field's cost
 * attached (operation-cost.ts) so every transport can bound an operation before executing it, and
 * the rules of every root field (root-fields.ts).
 */
export function getSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({
    resolvers,
    authChecker,
    authMode: 'error',
    validate: { forbidUnknownValues: false },
    pubSub: runPubSub,
  }).then(withOperationCosts).then(withRootFieldRules);
  return built;
}
