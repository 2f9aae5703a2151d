import { type ASTNode, DocumentNode, getNamedType, getVariableValues, GraphQLFieldConfig, GraphQLSchema, isLeafType, Kind, visit, type OperationDefinitionNode } from 'graphql';
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

interface CostArgs { args: Record<string, unknown>; childComplexity: number }

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
  const inside = (node: ASTNode) => visit(node, { Variable() { reads = true; } });
  visit(document, {
    Argument(node) { if (node.name.value === 'limit') inside(node); },
    Directive(node) { if (node.name.value === 'include' || node.name.value === 'skip') inside(node); },
  });
  return reads;
}

/**
 * Costs of documents whose cost no variable changes, per operation name. Keyed by the parsed document:
 * Apollo hands the same object for the same query text, and costing walked the whole document with
 * type information on every request (7 % of a GraphQL read's CPU).
 */
const knownCosts = new WeakMap<DocumentNode, { readsVariables: boolean; byOperation: Map<string, number> }>();

/**
 * The variables checked as getComplexity checks them (its message, its choice of operations), for a
 * cost that is already known: a request whose variables do not coerce is refused the same way whether
 * or not the document was costed before.
 */
function assertVariablesCoerce(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown>, operationName: string | undefined): void {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  for (const operation of operations) {
    if (operationName !== undefined && operationName !== operation.name?.value) continue;
    const { errors } = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
    if (errors?.length) throw new AppError('BadClientData', `The operation cannot be costed: ${errors[errors.length - 1].message}`);
  }
}

/**
 * Refuses an operation whose cost exceeds `maxCost` before it executes (BadClientData); aliases and
 * fragments count each time they are selected.
 */
export function assertOperationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  { variables, operationName, maxCost }: { variables?: Record<string, unknown>; operationName?: string | null; maxCost: number },
): number {
  let known = knownCosts.get(document);
  if (!known) knownCosts.set(document, (known = { readsVariables: costReadsVariables(document), byOperation: new Map() }));
  const name = operationName ?? undefined;
  let cost = known.readsVariables ? undefined : known.byOperation.get(name ?? '');
  if (cost !== undefined) {
    assertVariablesCoerce(schema, document, variables ?? {}, name);
  } else {
    try {
      cost = getComplexity({ schema, query: document, variables: variables ?? {}, operationName: name, estimators });
    } catch (error) {
      // Too many nodes to evaluate (fragment spreads multiply), or variables that do not coerce.
      throw new AppError('BadClientData', `The operation cannot be costed: ${(error as Error).message}`);
    }
    if (!known.readsVariables) known.byOperation.set(name ?? '', cost);
  }
  if (cost > maxCost) {
    throw new AppError('BadClientData', `The operation costs ${cost}, more than the limit of ${maxCost} (GRAPHQL_MAX_COST); split it into several requests`);
  }
  return cost;
}
