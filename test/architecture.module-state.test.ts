import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * docs/architecture.md lists every piece of module-level state ("What the composition builds"): a
 * reader who wonders what outlives a request finds it there, and a new module-level cache, registry or
 * `let` fails this test until the table names it with its reason.
 */
const ROOT = path.join(__dirname, '..');
const STATEFUL = new Set(['Map', 'WeakMap', 'Set', 'WeakSet', 'LRUCache', 'Ajv', 'EventEmitter']);

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(file);
    return /\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [file] : [];
  });
}

/** Top-level `let`s, and `const`s holding a new Map, cache, registry array or compiler. */
function moduleState(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const isLet = (statement.declarationList.flags & ts.NodeFlags.Let) !== 0;
    for (const declaration of statement.declarationList.declarations) {
      // An UPPER_CASE name is a constant by the house convention (a lookup Set built once and never changed).
      if (!ts.isIdentifier(declaration.name) || /^[A-Z][A-Z0-9_]*$/.test(declaration.name.text)) continue;
      const init = declaration.initializer;
      const stateful =
        isLet ||
        (init !== undefined &&
          ((ts.isNewExpression(init) && ts.isIdentifier(init.expression) && STATEFUL.has(init.expression.text)) ||
            (ts.isArrayLiteralExpression(init) && init.elements.length === 0)));
      if (stateful) names.push(declaration.name.text);
    }
  }
  return names;
}

test('docs/architecture.md names every module-level state of src/ and rest-bridge/, file and name in one row', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const rows = doc.split('\n').filter((line) => line.startsWith('|'));
  const found = [...sources(path.join(ROOT, 'src')), ...sources(path.join(ROOT, 'rest-bridge'))].flatMap((file) =>
    moduleState(file).map((name) => ({ file: path.relative(ROOT, file), name })),
  );
  expect(found.length).toBeGreaterThan(5);
  const missing = found
    .filter(({ file, name }) => !rows.some((row) => row.includes(`\`${file}`) && row.includes(`\`${name}\``)))
    .map(({ file, name }) => `${file} ${name}`);
  expect(missing).toEqual([]);
});
