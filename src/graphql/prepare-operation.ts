import { DocumentNode, ExecutionArgs, GraphQLError, GraphQLSchema, specifiedRules, validate } from 'graphql';
import { AppError } from '../errors';
import { InputHygieneRule } from './input-hygiene.rule';
import { parseBounded } from './document-bounds';
import { assertOperationCost } from './operation-cost';
import type { AppContext } from './context';

/** The validation rules every GraphQL transport runs: graphql-js's own plus literal hygiene. */
export const VALIDATION_RULES = [...specifiedRules, InputHygieneRule];

export interface OperationParams {
  query?: unknown;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
}

/**
 * Parses, validates and costs an operation before anything executes — what Apollo's pipeline plus
 * our plugin do for /graphql, for transports without that pipeline (graphql-sse).
 */
export function prepareOperation(
  schema: GraphQLSchema,
  params: OperationParams,
  contextValue: AppContext,
  { maxCost, maxTokens }: { maxCost: number; maxTokens: number },
): { args: ExecutionArgs } | { errors: readonly GraphQLError[] } {
  if (typeof params.query !== 'string' || !params.query)
    return { errors: [new AppError('BadClientData', 'The request has no GraphQL query')] };
  let document: DocumentNode;
  try {
    document = parseBounded(params.query, maxTokens);
  } catch (error) {
    return { errors: [error instanceof AppError ? error : new AppError('BadClientData', (error as Error).message)] };
  }
  const errors = validate(schema, document, VALIDATION_RULES);
  if (errors.length) return { errors };
  const variables = params.variables ?? undefined;
  try {
    assertOperationCost(schema, document, { variables, operationName: params.operationName, maxCost });
  } catch (error) {
    return { errors: [error as AppError] };
  }
  return {
    args: {
      schema,
      document,
      variableValues: variables,
      operationName: params.operationName ?? undefined,
      contextValue,
    },
  };
}
