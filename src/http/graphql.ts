import type http from 'node:http';
import type { Express, NextFunction, Request, Response } from 'express';
import type { GraphQLSchema } from 'graphql';
import { ApolloServer, ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import { AppError } from '../errors';
import { AppContext, buildContext } from '../graphql/context';
import { toPublicError } from '../graphql/format-error';
import { InputHygieneRule } from '../graphql/input-hygiene.rule';
import { parseBounded } from '../graphql/document-bounds';
import { assertOperationCost } from '../graphql/operation-cost';
import type { ApiServices } from '../graphql/context';
import { ERROR_STATUS } from '../error-status';
import { sendEdgeError } from './json-body';
import { GRAPHQL_STREAM_PATH } from './graphql-stream';

/** A request Apollo must not execute; `http.status` is how Apollo learns the status. */
const requestError = (message: string) =>
  new AppError('BadClientData', message, { http: { status: ERROR_STATUS.BadClientData } });

/**
 * Marks the context of a request that prefers `application/json` to `application/graphql-response+json`:
 * GraphQL over HTTP asks that its parse, validation and variable-coercion failures be 200. A symbol
 * property, not a WeakSet: Apollo hands plugins a shallow copy of the context.
 */
const LEGACY_JSON = Symbol('prefers application/json');
type GraphqlContext = AppContext & { [LEGACY_JSON]?: boolean };
const DOCUMENT_FAILURES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT']);

function servicePlugin(maxCost: number): ApolloServerPlugin<AppContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, operation, document, request }) {
          if (operation?.operation === 'subscription') {
            throw requestError(`Subscriptions are served over graphql-sse at ${GRAPHQL_STREAM_PATH}, not at /graphql`);
          }
          try {
            assertOperationCost(schema, document, {
              variables: request.variables,
              operationName: request.operationName,
              maxCost,
            });
          } catch (error) {
            throw requestError((error as Error).message);
          }
        },
        async willSendResponse({ contextValue, response, errors }) {
          for (const [name, value] of Object.entries(contextValue.responseHeaders ?? {}))
            response.http.headers.set(name, value);
          if (response.body.kind !== 'single') return;
          const result = response.body.singleResult;
          if (contextValue.notices?.length) result.extensions = { ...result.extensions, notices: contextValue.notices };
          // A document that did not parse, validate, coerce its variables or fit the cost limit: 200 for legacy
          // clients (GraphQL over HTTP); a malformed request (no query, say) stays 400.
          const documentFailure =
            !!errors?.length &&
            errors.every((error) => error instanceof AppError || DOCUMENT_FAILURES.has(String(error.extensions?.code)));
          if (
            response.http.status === 400 &&
            !('data' in result) &&
            documentFailure &&
            (contextValue as GraphqlContext)[LEGACY_JSON]
          )
            response.http.status = 200;
        },
      };
    },
  };
}

/** Apollo Server on /graphql: the service's plugin, error reduction and literal hygiene rule. */
export function createApollo(
  schema: GraphQLSchema,
  services: ApiServices,
  server: http.Server,
): ApolloServer<AppContext> {
  const { log } = services;
  return new ApolloServer<AppContext>({
    schema,
    introspection: true,
    // main.ts owns SIGINT/SIGTERM: Apollo's own handlers would stop it first and re-raise the signal mid-shutdown.
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    validationRules: [InputHygieneRule],
    // documentBoundsGuard checked the document first; this keeps Apollo's own parse bounded alike.
    parseOptions: { maxTokens: services.config.graphqlMaxTokens },
    // Apollo's own logger writes multi-line text to the console; errors are logged below, as JSON.
    logger: {
      debug: () => {},
      info: () => {},
      warn: (message) => log.warn({ detail: String(message) }, 'Apollo warning'),
      error: (message) => log.error({ detail: String(message) }, 'Apollo error'),
    },
    plugins: [ApolloServerPluginDrainHttpServer({ httpServer: server }), servicePlugin(services.config.graphqlMaxCost)],
    formatError: (formatted, error) => {
      const publicError = toPublicError(error as never);
      if (publicError.code === 'Internal')
        log.error({ err: publicError.internal ?? error }, 'internal error in GraphQL');
      return {
        message: publicError.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: { code: publicError.code },
      };
    },
  });
}

/** Accepted documents remembered per process, so a client's repeated query is not parsed twice per request. */
const REMEMBERED_DOCUMENTS = 1000;
const REMEMBERED_DOCUMENT_CHARS = 4096;

/**
 * Refuses, before Apollo parses and validates it, a document outside the bounds that keep that work
 * short (src/graphql/document-bounds.ts): size, depth, tokens, fragment spreads, repeated fields.
 */
function documentBoundsGuard(maxTokens: number) {
  const accepted = new Set<string>();
  return (req: Request, res: Response, next: NextFunction): void => {
    const source = req.method === 'GET' ? req.query.query : (req.body as { query?: unknown } | undefined)?.query;
    if (typeof source === 'string' && !accepted.has(source)) {
      try {
        parseBounded(source, maxTokens);
      } catch (error) {
        // A syntax error is Apollo's to report, in GraphQL's own shape.
        if (error instanceof AppError) return sendEdgeError(req, res, error);
        return next();
      }
      if (source.length <= REMEMBERED_DOCUMENT_CHARS) {
        if (accepted.size >= REMEMBERED_DOCUMENTS) accepted.delete(accepted.values().next().value!);
        accepted.add(source);
      }
    }
    next();
  };
}

/** Mounts a started Apollo server on /graphql (bodies are parsed and checked by the shared JSON parser). */
export function mountGraphql(app: Express, apollo: ApolloServer<AppContext>, services: ApiServices): void {
  app.use(
    '/graphql',
    documentBoundsGuard(services.config.graphqlMaxTokens),
    expressMiddleware(apollo, {
      context: async ({ req }) => {
        const context: GraphqlContext = await buildContext(services, req);
        if (req.accepts(['application/json', 'application/graphql-response+json']) === 'application/json')
          context[LEGACY_JSON] = true;
        return context;
      },
    }),
  );
}
