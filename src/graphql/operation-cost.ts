import {
  type ASTNode,
  DocumentNode,
  getNamedType,
  getOperationAST,
  getVariableValues,
  GraphQLFieldConfig,
  GraphQLSchema,
  isLeafType,
  visit,
  type OperationDefinitionNode,
} from 'graphql';
import { getDirective, MapperKind, mapSchema } from '@graphql-tools/utils';
import { mergeSchemas } from '@graphql-tools/schema';
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';
import { AppError } from '../errors';

/** Any mutation field without its own `@cost`. */
const MUTATION_COST = 10;
/** Pages without a `limit` argument count as this many items. */
const DEFAULT_PAGE_ITEMS = 10;

/**
 * The cost model in the SDL, so a client reads what a field costs in schema/schema.graphql. Fields
 * carry it with type-graphql's `@Directive('@cost(weight: N)')`.
 */
const COST_TYPE_DEFS = /* GraphQL */ `
  """
  What the field costs beyond what is selected in it, where it does real work or moves a counter. Without
  it a leaf costs 0, an object 1 and a mutation ${MUTATION_COST}; a field with a \`limit\` argument multiplies
  what is selected in it by the limit asked for (${DEFAULT_PAGE_ITEMS} when none), and each alias costs again.
  An operation may cost at most GRAPHQL_MAX_COST (1000 by default).
  """
  directive @cost(weight: Int!) on FIELD_DEFINITION
`;

interface CostArgs {
  args: Record<string, unknown>;
  childComplexity: number;
}

/**
 * Composes the `@cost` definition onto the type-graphql schema and turns each field's cost into
 * `extensions.complexity`, which graphql-query-complexity's fieldExtensionsEstimator reads. A
 * misspelt `@cost`, a missing or unknown argument (the SDL rebuild) or a weight that is not an Int
 * (getDirective) fails the schema build, so no field silently falls back to the default cost.
 */
export function withOperationCosts(schema: GraphQLSchema): GraphQLSchema {
  const composed = mergeSchemas({ schemas: [schema], typeDefs: COST_TYPE_DEFS });
  const mutationType = composed.getMutationType()?.name;
  return mapSchema(composed, {
    [MapperKind.OBJECT_FIELD]: (field: GraphQLFieldConfig<unknown, unknown>, fieldName: string, typeName: string) => {
      const weight = (getDirective(composed, field, 'cost')?.[0] as { weight: number } | undefined)?.weight;
      const own = weight ?? (typeName === mutationType ? MUTATION_COST : isLeafType(getNamedType(field.type)) ? 0 : 1);
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
 * Whether a variable can change the document's cost: only through a `limit` argument (the cost model
 * above reads no other) or an `@include`/`@skip` condition.
 */
function costReadsVariables(document: DocumentNode): boolean {
  let reads = false;
  const inside = (node: ASTNode) =>
    visit(node, {
      Variable() {
        reads = true;
      },
    });
  visit(document, {
    Argument(node) {
      if (node.name.value === 'limit') inside(node);
    },
    Directive(node) {
      if (node.name.value === 'include' || node.name.value === 'skip') inside(node);
    },
  });
  return reads;
}

/** Whether a document's cost can change with its variables (costReadsVariables), once per parsed document. */
const readsVariablesOf = new WeakMap<DocumentNode, boolean>();

/**
 * Costs of operations no variable can change. Keyed by the operation's node in the parsed document:
 * Apollo hands the same document object for the same query text, and costing walked the whole document
 * with type information on every request (7 % of a GraphQL read's CPU). Only an operation the request
 * names unambiguously is remembered, so what is kept is bounded by the documents Apollo keeps.
 */
const knownCosts = new WeakMap<OperationDefinitionNode, number>();

/**
 * Refuses an operation whose cost exceeds `maxCost` before it executes (BadClientData); aliases and
 * fragments count each time they are selected.
 */
export function assertOperationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  {
    variables,
    operationName,
    maxCost,
  }: { variables?: Record<string, unknown>; operationName?: string | null; maxCost: number },
): number {
  let readsVariables = readsVariablesOf.get(document);
  if (readsVariables === undefined) readsVariablesOf.set(document, (readsVariables = costReadsVariables(document)));
  const operation = readsVariables ? null : getOperationAST(document, operationName ?? undefined);
  let cost = operation ? knownCosts.get(operation) : undefined;
  if (operation && cost !== undefined) {
    // Checked as getComplexity checks them, so variables that do not coerce are refused alike the first time and after.
    const { errors } = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {});
    if (errors?.length)
      throw new AppError('BadClientData', `The operation cannot be costed: ${errors[errors.length - 1].message}`);
  } else {
    try {
      cost = getComplexity({
        schema,
        query: document,
        variables: variables ?? {},
        operationName: operationName ?? undefined,
        estimators,
      });
    } catch (error) {
      // Too many nodes to evaluate (fragment spreads multiply), or variables that do not coerce.
      throw new AppError('BadClientData', `The operation cannot be costed: ${(error as Error).message}`);
    }
    if (operation) knownCosts.set(operation, cost);
  }
  if (cost > maxCost) {
    throw new AppError(
      'BadClientData',
      `The operation costs ${cost}, more than the limit of ${maxCost} (GRAPHQL_MAX_COST); split it into several requests`,
    );
  }
  return cost;
}
