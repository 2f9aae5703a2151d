import { buildGraphqlSchema } from '../src/graphql/schema';
import { loadOperations } from '../rest-bridge/operations';
import { isCompiled } from '../rest-bridge/compiled';
import { routes } from '../rest-bridge/routes';

// The REST bridge runs its operations compiled with graphql-jit (rest-bridge/compiled.ts) and falls
// back to graphql-js for one that does not compile: this says when that fallback is in use.
test('every operation the bridge runs compiles with graphql-jit, and compiling leaves the shared document as it was', async () => {
  const schema = await buildGraphqlSchema();
  const document = loadOperations();
  // JSON, not print(): graphql-jit's annotations on a compiled AST are properties print() ignores.
  const before = JSON.stringify(document);
  const operations = [...new Set(routes.filter((r) => r.shape !== 'event-stream').map((r) => r.operation))];
  expect(operations.filter((name) => !isCompiled(schema, document, name))).toEqual([]);
  expect(JSON.stringify(document)).toBe(before);
});
