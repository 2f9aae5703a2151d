import { DocumentNode, execute, GraphQLError, GraphQLSchema } from 'graphql';
import type { AppContext } from '../src/graphql/context';
import { toPublicError } from '../src/graphql/format-error';
import { AppError } from '../src/errors';
import { omitNulls } from '../src/omit-nulls';
import { ERROR_STATUS, errorEnvelope } from '../src/error-status';
import type { Route } from './route';
import { checkRequest } from './validate';

export interface RawRequest {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  headers?: Record<string, string | string[] | undefined>;
}

export interface BridgeResponse {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

export function errorResponse(
  error: AppError | { code: keyof typeof ERROR_STATUS; message: string },
  headers: Record<string, string> = {},
): BridgeResponse {
  return { ...errorEnvelope(error), headers };
}

function decodeHeaders(raw: RawRequest['headers'] = {}): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(raw).map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value]),
  );
}

/**
 * A REST field left out is an absent variable, not a null one: GraphQL reads a variable whose value
 * is `undefined` as null, which would make "keep its value" (absent) and "clear it" (JSON null) the same.
 */
function presentVariables(variables: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(variables).filter(([, value]) => value !== undefined));
}

/**
 * Runs one route: check the request against the route's schemas (rest-bridge/validate.ts), execute
 * its operation in-process on the shared schema with the caller's context (graphql-js `execute`),
 * and shape the result or the error as REST. Nothing here decides a rule.
 */
export async function runRoute(
  schema: GraphQLSchema,
  document: DocumentNode,
  route: Route,
  request: RawRequest,
  context: AppContext,
  onInternalError: (error: unknown) => void,
): Promise<BridgeResponse> {
  let variableValues: Record<string, unknown>;
  try {
    const input = checkRequest(route, {
      params: request.params,
      query: request.query,
      body: request.body,
      headers: decodeHeaders(request.headers),
    });
    variableValues = presentVariables(route.variables(input));
  } catch (error) {
    if (error instanceof AppError) return errorResponse(error);
    throw error;
  }

  const result = await execute({
    schema,
    document,
    operationName: route.operation,
    variableValues,
    contextValue: context,
  });
  const headers = { ...context.responseHeaders };
  if (result.errors?.length) {
    const publicError = toPublicError(result.errors[0] as GraphQLError);
    if (publicError.code === 'Internal') onInternalError(publicError.internal ?? result.errors[0]);
    return errorResponse(publicError, headers);
  }
  const value = (result.data as Record<string, unknown>)[route.result];
  switch (route.shape ?? 'object') {
    case 'page': {
      const { total_count, limit, page, data } = value as {
        total_count: number;
        limit: number;
        page: number;
        data: unknown[];
      };
      return {
        status: 200,
        headers,
        body: { meta: { total_count, limit, page }, data: data.map((item) => omitNulls(item, route.omitWhenNull)) },
      };
    }
    case 'typescript':
      return {
        status: 200,
        headers: { ...headers, 'Content-Type': 'application/typescript; charset=utf-8' },
        body: String(value),
      };
    case 'redirect':
      return { status: 302, headers: { ...headers, Location: String(value) } };
    default: {
      const body: Record<string, unknown> = { status: 'success', payload: omitNulls(value, route.omitWhenNull) };
      if (context.notices.length > 0) body.notices = context.notices;
      return { status: 200, headers, body };
    }
  }
}
