import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { authChecker } from './auth-checker';
import { withRootFieldRules } from './root-fields';
import { resolvers } from './resolvers';
import { createRunPubSub } from './pubsub';
import { withOperationCosts } from './operation-cost';

/**
 * Builds the schema behind /graphql, the REST bridge and /graphql/stream, with each field's cost
 * attached (operation-cost.ts) so every transport can bound an operation before executing it, and
 * the rules of every root field (root-fields.ts). The composition (src/app.ts) builds it once and
 * passes it to each transport; every call builds anew.
 */
export function buildGraphqlSchema(): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers,
    authChecker,
    authMode: 'error',
    validate: { forbidUnknownValues: false },
    pubSub: createRunPubSub(),
  })
    .then(withOperationCosts)
    .then(withRootFieldRules);
}
