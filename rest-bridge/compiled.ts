import { DocumentNode, execute, ExecutionResult, GraphQLSchema, parse, print } from 'graphql';
import { compileQuery, CompiledQuery, isCompiledQuery } from 'graphql-jit';
import type { AppContext } from '../src/graphql/context';

/**
 * Executes the bridge's operations, each compiled once with graphql-jit: the operations are fixed
 * documents (schema/operations/*.graphql, validated at start), so the per-request work graphql-js
 * repeats (collecting fields, resolving fragments, building each field's info) is done once.
 *
 * The compiled query calls the schema's own resolvers, so type-graphql's auth checker and global
 * middlewares (invalid token, notices), the policies and the resolvers' errors are the same.
 * Normal execution (graphql-js `execute`) is kept where the compiled one could differ:
 * - an operation graphql-jit cannot compile (test/bridge-compiled.test.ts checks that none is left);
 * - a result with an error that no field raised (variable coercion): re-executed with graphql-js, so
 *   the message is graphql-js's own. Such an error is raised before any resolver runs, so nothing
 *   has happened yet that running again would repeat.
 */
const compiledByDocument = new WeakMap<DocumentNode, Map<string, CompiledQuery | null>>();

function compiled(schema: GraphQLSchema, document: DocumentNode, operationName: string): CompiledQuery | null {
  let byName = compiledByDocument.get(document);
  if (!byName) compiledByDocument.set(document, (byName = new Map()));
  let query = byName.get(operationName);
  if (query === undefined) {
    query = null;
    try {
      // Each operation compiles its own copy of the document: graphql-jit annotates the AST it
      // compiles (a fragment spread under @include marks the fragment's fields), which would leak
      // into other operations sharing the fragment and into graphql-js executing the shared document.
      const result = compileQuery(schema, parse(print(document)), operationName, { useExperimentalPathBasedSkipInclude: true });
      if (isCompiledQuery(result)) query = result;
    } catch {
      // graphql-jit does not handle something in this operation: graphql-js executes it.
    }
    byName.set(operationName, query);
  }
  return query;
}

/** Whether `operationName` runs compiled (tests use it to know both paths are exercised). */
export function isCompiled(schema: GraphQLSchema, document: DocumentNode, operationName: string): boolean {
  return compiled(schema, document, operationName) !== null;
}

/**
 * graphql-js treats an input object field whose value is `undefined` as not given (routes map
 * absent REST fields to `undefined`); graphql-jit coerces it to `null`, which means "clear". Both
 * agree on a field that is left out, so such fields are left out.
 */
function withoutUndefined(value: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (v === undefined) continue;
    copy[key] = isPlainObject(v) ? withoutUndefined(v) : v;
  }
  return copy;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

export async function executeOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string,
  variableValues: Record<string, unknown>,
  contextValue: AppContext,
): Promise<ExecutionResult> {
  const query = compiled(schema, document, operationName);
  if (query) {
    const result = await query.query(undefined, contextValue, withoutUndefined(variableValues));
    if (!result.errors?.length || result.errors.every((e) => e.path !== undefined)) return result;
  }
  return execute({ schema, document, operationName, variableValues, contextValue });
}
