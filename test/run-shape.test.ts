import { Kind, type FieldNode, type FragmentDefinitionNode } from 'graphql';
import { loadOperations } from '../rest-bridge/operations';
import { RUN_COLUMNS, type RunApiField } from '../src/models/CircuitRun';
import { buildGraphqlSchema } from '../src/graphql/schema';

/**
 * One run shape (issue #9.3): RUN_COLUMNS declares a run's columns; the GraphQL type is built from it,
 * and the REST fragment (the payload of GET, lists, SSE state events, cancel and Prefer: wait) must
 * select every exposed column under its column name. Adding a run field: the migration, RUN_COLUMNS,
 * and this fragment.
 */
const exposed = Object.entries(RUN_COLUMNS).flatMap(([column, spec]) => ('api' in spec && spec.api ? [[column, (spec.api as RunApiField).name]] : []));

test('the GraphQL CircuitRun type has a field for every exposed run column', async () => {
  const type = (await buildGraphqlSchema()).getType('CircuitRun') as unknown as { getFields(): Record<string, unknown> };
  expect(Object.keys(type.getFields())).toEqual(expect.arrayContaining(exposed.map(([, name]) => name)));
});

test('the REST fragment RestCircuitRun selects every exposed run column as its snake_case column name', () => {
  const fragment = loadOperations().definitions.find((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === 'RestCircuitRun');
  const selected = Object.fromEntries(fragment!.selectionSet.selections.filter((s): s is FieldNode => s.kind === Kind.FIELD).map((f) => [f.alias?.value ?? f.name.value, f.name.value]));
  expect(selected).toEqual(expect.objectContaining(Object.fromEntries(exposed)));
});
