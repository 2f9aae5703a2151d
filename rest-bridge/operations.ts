import fs from 'node:fs';
import path from 'node:path';
import { DocumentNode, GraphQLSchema, Kind, parse, validate } from 'graphql';
import { PROJECT_ROOT } from '../src/paths';

export const OPERATIONS_DIR = path.join(PROJECT_ROOT, 'schema', 'operations');

/** All of schema/operations/*.graphql as one document: operations may share fragments across files. */
export function loadOperations(dir = OPERATIONS_DIR): DocumentNode {
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort();
  const source = files.map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n');
  return parse(source);
}

export function operationNames(document: DocumentNode): string[] {
  return document.definitions.flatMap((d) => (d.kind === Kind.OPERATION_DEFINITION && d.name ? [d.name.value] : []));
}

/** Fails with every problem at once when an operation does not fit the schema. */
export function assertOperationsValid(schema: GraphQLSchema, document: DocumentNode): void {
  const errors = validate(schema, document);
  if (errors.length > 0) {
    throw new Error(
      `schema/operations do not validate against the schema:\n${errors.map((e) => `- ${e.message}`).join('\n')}`,
    );
  }
}
