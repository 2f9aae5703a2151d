import { defaultFieldResolver, type GraphQLSchema } from 'graphql';
import { MapperKind, mapSchema } from '@graphql-tools/utils';
import type { AppContext } from './context';
import { rejectInvalidToken } from './auth-checker';
import { settleNotices } from './notices';

/**
 * What every root field (query, mutation, subscription event) does around its resolver: refuse a bad
 * bearer token, and settle the deprecation notices of what it returned. On the root fields only: as
 * type-graphql global middlewares these ran around every field of every object returned, which made
 * each scalar field a chain of promises and made every field of a result asynchronous.
 */
export function withRootFieldRules(schema: GraphQLSchema): GraphQLSchema {
  return mapSchema(schema, {
    [MapperKind.ROOT_FIELD]: (field) => {
      const resolve = field.resolve ?? defaultFieldResolver;
      return {
        ...field,
        resolve: async (root, args, context: AppContext, info) => {
          rejectInvalidToken(context);
          const result: unknown = await resolve(root, args, context, info);
          settleNotices(context);
          return result;
        },
      };
    },
  });
}
