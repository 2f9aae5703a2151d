import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The folders stand in floors: a folder of src/ (and rest-bridge/) is one room, each file at the top of
 * src/ its own, and no room reaches itself through another's imports. A file-level cycle is caught by the
 * no-import-cycle lint rule; this holds the coarser picture docs/architecture.md draws (Layout): a folder
 * that imports a folder that imports it back has no floor of its own.
 */
const ROOT = path.join(__dirname, '..');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(file);
    return /\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [file] : [];
  });
}

function resolve(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = path.resolve(path.dirname(from), specifier);
  const candidates = [base, `${base}.ts`, path.join(base, 'index.ts'), base.replace(/\.js$/, '.ts')];
  return (
    candidates.find((file) => file.endsWith('.ts') && fs.statSync(file, { throwIfNoEntry: false })?.isFile()) ?? null
  );
}

function roomOf(file: string): string {
  const [top, second, ...rest] = path.relative(ROOT, file).split(path.sep);
  if (top !== 'src') return `${top}/`;
  return rest.length > 0 ? `src/${second}/` : `src/${second}`;
}

/** Every room → room arrow, each with the file imports that draw it. */
function arrows(): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const file of [...sources(path.join(ROOT, 'src')), ...sources(path.join(ROOT, 'rest-bridge'))]) {
    for (const imported of ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true).importedFiles) {
      const target = resolve(file, imported.fileName);
      if (!target) continue;
      const [from, to] = [roomOf(file), roomOf(target)];
      if (from === to) continue;
      const out = graph.get(from) ?? new Map<string, string[]>();
      graph.set(from, out);
      out.set(to, [...(out.get(to) ?? []), `${path.relative(ROOT, file)} → ${path.relative(ROOT, target)}`]);
    }
  }
  return graph;
}

/** Tarjan's strongly connected components of more than one room. */
function circles(graph: Map<string, Map<string, string[]>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (room: string) => {
    index.set(room, index.size);
    low.set(room, index.get(room)!);
    stack.push(room);
    for (const next of graph.get(room)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(room, Math.min(low.get(room)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(room, Math.min(low.get(room)!, index.get(next)!));
      }
    }
    if (low.get(room) !== index.get(room)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      component.push(member);
    } while (member !== room);
    if (component.length > 1) found.push(component.sort());
  };
  for (const room of graph.keys()) if (!index.has(room)) visit(room);
  return found;
}

test('no folder of src/ or rest-bridge/ reaches itself through the imports of another', () => {
  const graph = arrows();
  expect(graph.size).toBeGreaterThan(20);
  const described = circles(graph).map((component) =>
    component.flatMap((room) =>
      [...(graph.get(room) ?? [])]
        .filter(([to]) => component.includes(to))
        .map(([to, why]) => `${room} → ${to}: ${why[0]}`),
    ),
  );
  expect(described).toEqual([]);
});
