import fs from 'node:fs';
import path from 'node:path';
import { printSchema, lexicographicSortSchema } from 'graphql';
import { getSchema } from './schema';
import { PROJECT_ROOT } from '../paths';

export const SCHEMA_FILE = path.join(PROJECT_ROOT, 'schema', 'schema.graphql');

export async function printedSchema(): Promise<string> {
  return printSchema(lexicographicSortSchema(await getSchema())) + '\n';
}

if (require.main === module) {
  void printedSchema().then((sdl) => {
    fs.writeFileSync(SCHEMA_FILE, sdl);
    console.log(`wrote ${path.relative(process.cwd(), SCHEMA_FILE)}`);
  });
}
