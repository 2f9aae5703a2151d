import { Kind, type FieldNode, type FragmentDefinitionNode } from 'graphql';
import { loadOperations } from '../rest-bridge/operations';
import { CircuitRun, RUN_COLUMNS, runColumnSqlType, type RunApiField } from '../src/models/CircuitRun';
import { buildGraphqlSchema } from '../src/graphql/schema';
import { createSequelize } from '../src/db/sequelize';
import { createTestDatabase } from './support/database';

/**
 * One run shape: RUN_COLUMNS declares a run's columns; the GraphQL type is built from it,
 * and the REST fragment (the payload of GET, lists, SSE state events, cancel and Prefer: wait) must
 * select every exposed column under its column name. Adding a run field: the migration, RUN_COLUMNS,
 * and this fragment. The write shape (`draft`) takes its SQL types from RUN_COLUMNS, held to the database below.
 */
const exposed = Object.entries(RUN_COLUMNS).flatMap(([column, spec]) =>
  'api' in spec && spec.api ? [[column, (spec.api as RunApiField).name]] : [],
);

test('the GraphQL CircuitRun type has a field for every exposed run column', async () => {
  const type = (await buildGraphqlSchema()).getType('CircuitRun') as unknown as {
    getFields(): Record<string, unknown>;
  };
  expect(Object.keys(type.getFields())).toEqual(expect.arrayContaining(exposed.map(([, name]) => name)));
});

test('the REST fragment RestCircuitRun selects every exposed run column as its snake_case column name', () => {
  const fragment = loadOperations().definitions.find(
    (d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === 'RestCircuitRun',
  );
  const selected = Object.fromEntries(
    fragment!.selectionSet.selections
      .filter((s): s is FieldNode => s.kind === Kind.FIELD)
      .map((f) => [f.alias?.value ?? f.name.value, f.name.value]),
  );
  expect(selected).toEqual(expect.objectContaining(Object.fromEntries(exposed)));
});

test('every column of RUN_COLUMNS is a column of circuit_runs in a migrated database, of the SQL type the admission statements cast drafts to', async () => {
  const database = await createTestDatabase();
  const sequelize = createSequelize(database.url, 1);
  try {
    CircuitRun.initModel(sequelize);
    const [rows] =
      await sequelize.query(`SELECT a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type FROM pg_attribute a
      WHERE a.attrelid = 'circuit_runs'::regclass AND a.attnum > 0 AND NOT a.attisdropped`);
    const inDatabase = Object.fromEntries(
      (rows as Array<{ column: string; type: string }>).map((row) => [row.column, row.type]),
    );
    const declared = Object.fromEntries(
      Object.keys(RUN_COLUMNS).map((column) => [
        column,
        runColumnSqlType(column as keyof typeof RUN_COLUMNS).toLowerCase(),
      ]),
    );
    expect(inDatabase).toEqual(expect.objectContaining(declared));
  } finally {
    await sequelize.close();
    await database.drop();
  }
});
