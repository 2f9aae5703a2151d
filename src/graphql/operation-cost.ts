import { DocumentNode, getNamedType, GraphQLFieldConfig, GraphQLSchema, isLeafType } from 'graphql';
import { MapperKind, mapSchema } from '@graphql-tools/utils';
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';
import { AppError } from '../errors';

/**
 * What a field costs beyond 1, where it does real work or moves a counter. Each alias of a field
 * costs again, so with GRAPHQL_MAX_COST 1000 one request starts at most 10 runs or counts at most
 * 10 blob reads.
 */
export const FIELD_COSTS: Record<string, number> = {
  'Mutation.queryCircuitAdaptor': 100,
  'Query.blob': 100,
  'Mutation.publishCircuitVersion': 50,
  'Query.search': 10,
  'Query.explainCircuit': 10,
  'Subscription.circuitRunUpdated': 10,
  'Subscription.circuitRunEvents': 10,
};
/** Any other mutation field. */
const MUTATION_COST = 10;
/** Pages without a `limit` argument count as this many items. */
const DEFAULT_PAGE_ITEMS = 10;

interface CostArgs { args: Record<string, unknown>; childComplexity: number }

/**
 * Attaches each field's cost to the schema as `extensions.complexity` (read by
 * graphql-query-complexity's fieldExtensionsEstimator), so costs live in one table and not in
 * every resolver's decorators. Leaves cost nothing; an object field 1 plus what is selected in it;
 * a field with a `limit` argument multiplies what is selected by the limit asked for.
 */
export function withOperationCosts(schema: GraphQLSchema): GraphQLSchema {
  const mutationType = schema.getMutationType()?.name;
  return mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (field: GraphQLFieldConfig<unknown, unknown>, fieldName: string, typeName: string) => {
      const own = FIELD_COSTS[`${typeName}.${fieldName}`] ?? (typeName === mutationType ? MUTATION_COST : isLeafType(getNamedType(field.type)) ? 0 : 1);
      const paged = field.args && 'limit' in field.args;
      const complexity = ({ args, childComplexity }: CostArgs) => {
        const items = paged ? (typeof args.limit === 'number' && args.limit > 0 ? args.limit : DEFAULT_PAGE_ITEMS) : 1;
        return own + items * childComplexity;
      };
      return { ...field, extensions: { ...field.extensions, complexity } };
    },
  });
}

// Meta fields (__typename) have no extensions: they cost nothing.
const estimators = [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 0 })];

/**
 * Refuses an operation whose cost exceeds `maxCost` before it executes (BadClientData); aliases and
 * fragments count each time they are selected.
 */
export function assertOperationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  { variables, operationName, maxCost }: { variables?: Record<string, unknown>; operationName?: string | null; maxCost: number },
): number {
  let cost: number;
  try {
    cost = getComplexity({ schema, query: document, variables: variables ?? {}, operationName: operationName ?? undefined, estimators });
  } catch (error) {
    // Too many nodes to evaluate (fragment spreads multiply), or variables that do not coerce.
    throw new AppError('BadClientData', `The operation cannot be costed: ${(error as Error).message}`);
  }
  if (cost > maxCost) {
    throw new AppError('BadClientData', `The operation costs ${cost}, more than the limit of ${maxCost} (GRAPHQL_MAX_COST); split it into several requests`);
  }
  return cost;
}
