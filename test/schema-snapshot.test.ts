import fs from 'node:fs';
import { printedSchema, SCHEMA_FILE } from '../src/graphql/emit-schema';

test('schema/schema.graphql is the schema the code builds', async () => {
  const built = await printedSchema();
  const committed = fs.existsSync(SCHEMA_FILE) ? fs.readFileSync(SCHEMA_FILE, 'utf8') : '';
  if (built !== committed) {
    throw new Error('schema/schema.graphql is stale: run npm run schema:emit and commit the result');
  }
});
