import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { authChecker, rejectInvalidToken } from './auth-checker';
import { noticesFromSubjects } from './notices';
import { resolvers } from './resolvers';
import { runPubSub } from '../events/pubsub';

let built: Promise<GraphQLSchema> | undefined;

/** The one schema behind /graphql, the REST bridge and /graphql/stream. */
export function getSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({
    resolvers,
    authChecker,
    authMode: 'error',
    globalMiddlewares: [rejectInvalidToken, noticesFromSubjects],
    validate: { forbidUnknownValues: false },
    pubSub: runPubSub,
  });
  return built;
}
