import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * No module may reach itself through its imports, type-only imports included. import-x/no-cycle
 * cannot say this: it skips `import type` without an option to count it (eslint-plugin-import-x 4),
 * yet two modules whose types need each other cannot be read or moved apart either.
 *
 * Only relative specifiers are followed (the project imports its own modules no other way). The
 * import graph is read from disk once per lint run with TypeScript's import scanner, which is much
 * cheaper than a parse per file; a long-lived process (an editor) reads it again once it has been idle
 * for a few seconds.
 */
const FRESH_MS = 3000;
let cache = { at: 0, imports: new Map(), scc: new Map() };

function resolveImport(from, specifier) {
  if (!specifier.startsWith('.')) return null;
  const base = path.resolve(path.dirname(from), specifier);
  const candidates = [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts'), base.replace(/\.js$/, '.ts')];
  return (
    candidates.find((file) => /\.tsx?$/.test(file) && fs.statSync(file, { throwIfNoEntry: false })?.isFile()) ?? null
  );
}

function importsOf(file) {
  let targets = cache.imports.get(file);
  if (!targets) {
    const text = fs.readFileSync(file, 'utf8');
    const found = ts.preProcessFile(text, true, true).importedFiles.map((i) => resolveImport(file, i.fileName));
    targets = [...new Set(found.filter((target) => target !== null))];
    cache.imports.set(file, targets);
  }
  return targets;
}

/** The strongly connected component of `start` (Tarjan over what it reaches), as a set of files. */
function componentOf(start) {
  if (Date.now() - cache.at > FRESH_MS) cache = { at: 0, imports: new Map(), scc: new Map() };
  cache.at = Date.now();
  if (cache.scc.has(start)) return cache.scc.get(start);
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  let next = 0;
  // Iterative, so a long chain of imports cannot overflow the call stack.
  const frames = [{ file: start, targets: importsOf(start), i: 0 }];
  index.set(start, next);
  low.set(start, next++);
  stack.push(start);
  onStack.add(start);
  while (frames.length > 0) {
    const frame = frames[frames.length - 1];
    if (frame.i < frame.targets.length) {
      const target = frame.targets[frame.i++];
      if (!index.has(target)) {
        if (cache.scc.has(target)) continue;
        index.set(target, next);
        low.set(target, next++);
        stack.push(target);
        onStack.add(target);
        frames.push({ file: target, targets: importsOf(target), i: 0 });
      } else if (onStack.has(target)) {
        low.set(frame.file, Math.min(low.get(frame.file), index.get(target)));
      }
      continue;
    }
    frames.pop();
    if (frames.length > 0) {
      const parent = frames[frames.length - 1].file;
      low.set(parent, Math.min(low.get(parent), low.get(frame.file)));
    }
    if (low.get(frame.file) === index.get(frame.file)) {
      const component = new Set();
      let file;
      do {
        file = stack.pop();
        onStack.delete(file);
        component.add(file);
      } while (file !== frame.file);
      for (const member of component) cache.scc.set(member, component);
    }
  }
  return cache.scc.get(start);
}

/** The shortest way from `from` back to `to` inside one component, for the message. */
function route(from, to, component) {
  const previous = new Map([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const file = queue.shift();
    if (file === to) break;
    for (const target of importsOf(file)) {
      if (component.has(target) && !previous.has(target)) {
        previous.set(target, file);
        queue.push(target);
      }
    }
  }
  const files = [];
  for (let file = to; file !== null && file !== undefined; file = previous.get(file)) files.unshift(file);
  return files;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: "Forbid import cycles between the project's modules, type-only imports included" },
    schema: [],
    messages: { cycle: 'Import cycle: {{route}}' },
  },
  create(context) {
    const file = context.physicalFilename;
    if (!/\.tsx?$/.test(file)) return {};
    const check = (node) => {
      const specifier = node.source?.type === 'Literal' ? node.source.value : null;
      if (typeof specifier !== 'string') return;
      const target = resolveImport(file, specifier);
      if (target === null) return;
      const component = componentOf(file);
      if (!component.has(target)) return;
      const cwd = context.cwd;
      const names = [file, ...route(target, file, component)].map((f) => path.relative(cwd, f));
      context.report({ node, messageId: 'cycle', data: { route: names.join(' → ') } });
    };
    return {
      ImportDeclaration: check,
      ExportAllDeclaration: check,
      ExportNamedDeclaration: check,
      ImportExpression: check,
    };
  },
};
