import type { Express } from 'express';
import type { ExecutionResult, GraphQLError, GraphQLSchema } from 'graphql';
import { createHandler } from 'graphql-sse/lib/use/express';
import { buildContext } from '../graphql/context';
import { toPublicError } from '../graphql/format-error';
import type { Services } from '../services';

export const GRAPHQL_STREAM_PATH = '/graphql/stream';

/**
 * GraphQL over SSE (graphql-sse protocol) at /graphql/stream, on the same schema and context builder
 * as /graphql; errors are reduced to public codes exactly as Apollo's formatError does. Mount it
 * before /graphql, which would otherwise claim the path as a prefix.
 */
export function mountGraphqlStream(app: Express, schema: GraphQLSchema, services: Services): void {
  const handler = createHandler<Record<string, unknown>>({
    schema,
    context: async (req) => (await buildContext(services, req.raw)) as unknown as Record<string, unknown>,
    onNext: (_ctx, _req, result) => {
      const errors = (result as ExecutionResult).errors;
      if (!errors?.length) return;
      return {
        ...result,
        errors: errors.map((error) => {
          const publicError = toPublicError(error as GraphQLError);
          if (publicError.code === 'Internal') services.log.error({ err: publicError.internal ?? error }, 'internal error in GraphQL stream');
          return { ...error.toJSON(), message: publicError.message, extensions: { code: publicError.code } } as unknown as GraphQLError;
        }),
      } as ExecutionResult;
    },
  });
  app.use(GRAPHQL_STREAM_PATH, async (req, res) => {
    try {
      await handler(req, res);
    } catch (error) {
      services.log.error({ err: error }, 'GraphQL stream failed');
      if (!res.headersSent) res.status(500).json({ errors: [{ message: 'Internal server error', extensions: { code: 'Internal' } }] });
      else res.end();
    }
  });
}
