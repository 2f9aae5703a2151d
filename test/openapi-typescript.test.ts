import { startTestApp, TestApp } from './support/app';
import { routes } from '../rest-bridge/routes';
import { openApiTypes } from './support/openapi-types';

/** The served document is precise enough for a generator (openapi-typescript) to type every payload. */
let t: TestApp;
let doc: any;
let types: string;
beforeAll(async () => {
  t = await startTestApp();
  doc = (await t.rest('GET', '/openapi.json')).body;
  types = await openApiTypes(doc);
});
afterAll(async () => {
  await t?.close();
});

/** The generated text of one operation's request body or success payload (up to its closing brace at that indentation). */
function operationBlock(operationId: string): string {
  const start = types.indexOf(`    ${operationId}: {`);
  expect(start).toBeGreaterThan(-1);
  const end = types.indexOf('\n    };', start);
  return types.slice(start, end);
}

test('operationIds are unique and readable (no numbered duplicates); the SSE route is StreamCircuitRunEvents', () => {
  const ids: string[] = [];
  for (const methods of Object.values<any>(doc.paths))
    for (const operation of Object.values<any>(methods)) ids.push(operation.operationId);
  expect(ids.length).toBe(routes.length);
  expect(new Set(ids).size).toBe(ids.length);
  for (const id of ids) expect(id).toMatch(/^[A-Z][A-Za-z]+$/);
  expect(doc.paths['/circuit-runs/{uid}/events'].get.operationId).toBe('StreamCircuitRunEvents');
  expect(doc.paths['/circuit-runs/{uid}'].get.operationId).toBe('GetCircuitRun');
  expect(types).toContain('StreamCircuitRunEvents: {');
});

test("a query's input and a schedule's input are free-form objects, not Record<string, never>", () => {
  const query = operationBlock('QueryCircuitAdaptor');
  expect(query).toMatch(/input: \{\s*\[key: string\]: unknown;\s*\};/);
  const schedule = operationBlock('CreateCircuitSchedule');
  expect(schedule).toMatch(/input: \{\s*\[key: string\]: unknown;\s*\};/);
  // No schema is typed as an empty object but the three bodies that take none (deprecate, star, unstar).
  const empties = types
    .split('\n')
    .filter((line) => line.includes('Record<string, never>'))
    .map((line) => line.trim());
  expect(empties.sort()).toEqual([
    ...Array(3).fill('"application/json": Record<string, never>;'),
    'export type $defs = Record<string, never>;',
    'export type webhooks = Record<string, never>;',
  ]);
});

test("a run's result_blob is typed: output, steps with kind, output, started_at, ended_at, credits and llm usage", () => {
  expect(types).toMatch(
    /RunResult: \{[\s\S]*?output: unknown;[\s\S]*?steps: \{\s*\[key: string\]: components\["schemas"\]\["RunStepResult"\];/,
  );
  expect(types).toMatch(
    /RunStepResult: \{[\s\S]*?kind: string;[\s\S]*?started_at: string;[\s\S]*?ended_at: string;[\s\S]*?credits: number;[\s\S]*?usage\?: components\["schemas"\]\["LlmUsage"\];/,
  );
  expect(types).toMatch(
    /LlmUsage: \{[\s\S]*?prompt_tokens: number;[\s\S]*?completion_tokens: number;[\s\S]*?total_tokens: number;/,
  );
  const run = operationBlock('GetCircuitRun');
  expect(run).toContain('result_blob?: components["schemas"]["RunResult"]');
});

test('every payload field is typed (no field of a success payload is left as an untyped any)', () => {
  // Fields whose value is any JSON by design (a step or circuit output, a comparison side) say so with a description.
  const untyped: string[] = [];
  const walk = (schema: any, at: string) => {
    if (!schema || typeof schema !== 'object') return;
    if (schema.properties) {
      for (const [name, child] of Object.entries<any>(schema.properties)) {
        if (child && Object.keys(child).length === 0) untyped.push(`${at}.${name}`);
        walk(child, `${at}.${name}`);
      }
    }
    if (schema.items) walk(schema.items, `${at}[]`);
  };
  for (const [path, methods] of Object.entries<any>(doc.paths)) {
    for (const [method, operation] of Object.entries<any>(methods)) {
      walk(operation.responses['200']?.content?.['application/json']?.schema, `${method.toUpperCase()} ${path}`);
      walk(operation.requestBody?.content?.['application/json']?.schema, `${method.toUpperCase()} ${path} body`);
    }
  }
  expect(untyped).toEqual([]);
});
