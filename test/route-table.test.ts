import { getNullableType, isListType, Kind, type FieldNode, type OperationDefinitionNode } from 'graphql';
import { buildGraphqlSchema } from '../src/graphql/schema';
import { assertOperationsValid, loadOperations, operationNames } from '../rest-bridge/operations';
import { routes } from '../rest-bridge/routes';
import { pathParams } from '../rest-bridge/openapi';

const document = loadOperations();

test('the operations in schema/operations validate against the schema', async () => {
  assertOperationsValid(await buildGraphqlSchema(), document);
});

test('every route names an existing operation and a unique method and path', () => {
  const names = new Set(operationNames(document));
  const missing = routes.filter((r) => !names.has(r.operation)).map((r) => `${r.method} ${r.path} → ${r.operation}`);
  expect(missing).toEqual([]);

  const seen = new Set<string>();
  const duplicates: string[] = [];
  for (const route of routes) {
    // Express treats :a and :b alike: compare paths with parameters erased.
    const key = `${route.method} ${route.path.replace(/:[^/]+/g, ':')}`;
    if (seen.has(key)) duplicates.push(`${route.method} ${route.path}`);
    seen.add(key);
  }
  expect(duplicates).toEqual([]);
});

test('every route reads each of its path parameters', () => {
  const unread: string[] = [];
  for (const route of routes) {
    const params = Object.fromEntries(pathParams(route.path).map((name) => [name, `sentinel-${name}`]));
    const query = Object.fromEntries(Object.keys(route.query ?? {}).map((name) => [name, undefined]));
    const body = Object.fromEntries(Object.keys(route.body ?? {}).map((name) => [name, undefined]));
    const variables = JSON.stringify(route.variables({ params, query, body }));
    for (const [name, sentinel] of Object.entries(params)) {
      if (!variables.includes(sentinel)) unread.push(`${route.method} ${route.path} ignores :${name}`);
    }
  }
  expect(unread).toEqual([]);
});

test('every route has a summary and a tag for the OpenAPI document', () => {
  const incomplete = routes.filter((r) => !r.summary.trim() || !r.tag.trim()).map((r) => `${r.method} ${r.path}`);
  expect(incomplete).toEqual([]);
});

test('every route whose operation answers a GraphQL list is a page: lists answer {meta, data}, never a payload array', async () => {
  const schema = await buildGraphqlSchema();
  const drift: string[] = [];
  for (const route of routes) {
    const operation = document.definitions.find(
      (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION && d.name?.value === route.operation,
    );
    const root = operation?.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
    const selection = operation?.selectionSet.selections.find(
      (s): s is FieldNode => s.kind === Kind.FIELD && (s.alias ?? s.name).value === route.result,
    );
    const field = selection && root?.getFields()[selection.name.value];
    if (!field) continue;
    if (isListType(getNullableType(field.type)) && route.shape !== 'page')
      drift.push(`${route.method} ${route.path} (${route.shape ?? 'object'})`);
    if (route.shape === 'page') {
      const keys = (selection.selectionSet?.selections ?? [])
        .map((s) => (s.kind === Kind.FIELD ? (s.alias ?? s.name).value : '?'))
        .sort();
      if (keys.join() !== 'data,limit,page,total_count')
        drift.push(`${route.method} ${route.path} selects ${keys.join()}`);
    }
  }
  expect(drift).toEqual([]);
});
