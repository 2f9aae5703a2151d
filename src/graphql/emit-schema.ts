import fs from 'node:fs';
import path from 'node:path';
import { lexicographicSortSchema } from 'graphql';
import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { buildGraphqlSchema } from './schema';
import { PROJECT_ROOT } from '../paths';

export const SCHEMA_FILE = path.join(PROJECT_ROOT, 'schema', 'schema.graphql');

/** With the directives applied to fields (graphql's printSchema leaves them out), so each `@cost` shows. */
export async function printedSchema(): Promise<string> {
  return printSchemaWithDirectives(lexicographicSortSchema(await buildGraphqlSchema())) + '\n';
}

if (require.main === module) {
  void printedSchema().then((sdl) => {
    fs.writeFileSync(SCHEMA_FILE, sdl);
    console.log(`wrote ${path.relative(process.cwd(), SCHEMA_FILE)}`);
  });
}
