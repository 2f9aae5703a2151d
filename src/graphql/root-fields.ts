import { defaultFieldResolver, type GraphQLResolveInfo, type GraphQLSchema } from 'graphql';
import { MapperKind, mapSchema } from '@graphql-tools/utils';
import type { AppContext } from './context';
import { rejectInvalidToken } from './auth-checker';
import { rootFieldScope, scopeRefusal } from '../policies/token.policy';
import { authorize } from '../policies/authorize';
import { AppError } from '../errors';
import { settleNotices } from './notices';

/**
 * What every root field (query, mutation, subscription event) does around its resolver: refuse a bad
 * bearer token, and settle the deprecation notices of what it returned. On the root fields only: as
 * type-graphql global middlewares these ran around every field of every object returned, which made
 * each scalar field a chain of promises and made every field of a result asynchronous.
 */
export function withRootFieldRules(schema: GraphQLSchema): GraphQLSchema {
  return mapSchema(schema, {
    [MapperKind.ROOT_FIELD]: (field, fieldName, typeName) => {
      const resolve = field.resolve ?? defaultFieldResolver;
      const scope = rootFieldScope(typeName, fieldName);
      const requireScope = (context: AppContext) => {
        if (!scope) return;
        const refusal = scopeRefusal(context.viewer, [scope]);
        authorize(context.viewer, refusal === null, refusal ?? undefined);
      };
      const subscribe = field.subscribe;
      return {
        ...field,
        // A subscription is refused before it starts, not at its first event.
        ...(subscribe
          ? {
              subscribe: (
                root: unknown,
                args: Record<string, unknown>,
                context: AppContext,
                info: GraphQLResolveInfo,
              ) => {
                rejectInvalidToken(context);
                requireScope(context);
                return subscribe(root, args, context, info);
              },
            }
          : {}),
        resolve: async (root, args, context: AppContext, info) => {
          rejectInvalidToken(context);
          requireScope(context);
          try {
            const result: unknown = await resolve(root, args, context, info);
            settleNotices(context);
            return result;
          } catch (error) {
            // A refusal that says when to come back (a token's daily credit cap, a rate limit) says it in the header too.
            const retryAfter = error instanceof AppError ? error.extensions.retryAfter : undefined;
            if (typeof retryAfter === 'number' && !context.responseHeaders['Retry-After'])
              context.responseHeaders['Retry-After'] = String(retryAfter);
            throw error;
          }
        },
      };
    },
  });
}
