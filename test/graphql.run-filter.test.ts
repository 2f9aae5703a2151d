import { buildSchema, isInputObjectType, isObjectType } from 'graphql';
import { printedSchema } from '../src/graphql/emit-schema';

/**
 * One filter of the caller's runs (src/graphql/run/run-filter.input.ts): the arguments of viewer.runs and
 * viewerRuns (besides their page) are the fields of the bulk actions' CircuitRunFilter input, by name, type and
 * description, so a filter added to the list is a filter of cancel and replay by filter too.
 */
test('viewer.runs, viewerRuns and CircuitRunFilter take the same filters', async () => {
  const schema = buildSchema(await printedSchema());
  const filter = schema.getType('CircuitRunFilter');
  const viewer = schema.getType('Viewer');
  const query = schema.getQueryType();
  if (!isInputObjectType(filter) || !isObjectType(viewer) || !query) throw new Error('missing types');
  const shape = (fields: ReadonlyArray<{ name: string; type: unknown; description?: string | null }>) =>
    fields
      .filter((field) => !['limit', 'page'].includes(field.name))
      .map((field) => ({ name: field.name, type: String(field.type), description: field.description }));
  const filters = shape(Object.values(filter.getFields()));
  expect(filters.map((field) => field.name).sort()).toEqual([
    'batchUid',
    'circuitUid',
    'createdAfter',
    'createdBefore',
    'metadata',
    'state',
    'tag',
  ]);
  expect(shape(viewer.getFields().runs.args)).toEqual(filters);
  expect(shape(query.getFields().viewerRuns.args)).toEqual(filters);
  expect(
    schema
      .getMutationType()!
      .getFields()
      .cancelCircuitRuns.args.find((a) => a.name === 'filter')!
      .type.toString(),
  ).toBe('CircuitRunFilter!');
});
