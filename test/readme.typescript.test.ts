import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { circuitModule } from '../src/clients/circuit-module';

/**
 * Every ```ts block of the README compiles as pasted: each is a file in the project directory, checked with the
 * project's own tsconfig.json (a CommonJS package, so a top-level await is an error) against clients/typescript/
 * and, for `./hello`, the module GET /circuits/{uid}/client.ts answers for the walk-through's circuit. A block
 * whose first line is `// fragment` is left out (the README then says so in the block).
 */
const ROOT = path.join(__dirname, '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([^]*?)^```$/gm)].map((match) => match[1]);
}

/** The walk-through's definition (its step 3 sends it on standard input), whose query_schema types hello.ts. */
function walkThroughDefinition(): { query_schema: unknown; output_schema?: unknown } {
  const heredoc = /--circuit hello --file \/dev\/stdin <<'EOF'\n([^]*?)\nEOF\n/.exec(README);
  if (!heredoc) throw new Error('the README walk-through no longer publishes hello from a heredoc');
  return JSON.parse(heredoc[1]) as { query_schema: unknown; output_schema?: unknown };
}

function helloModule(): string {
  const definition = walkThroughDefinition();
  return circuitModule({
    apiUrl: 'http://127.0.0.1:4000/api/v1',
    circuitUid: '00000000-0000-4000-8000-000000000001',
    circuitName: 'hello',
    adaptorUid: '00000000-0000-4000-8000-000000000002',
    versionUid: '00000000-0000-4000-8000-000000000003',
    versionNumber: 1,
    alias: null,
    querySchema: definition.query_schema,
    outputSchema: definition.output_schema ?? null,
  });
}

function projectOptions(): ts.CompilerOptions {
  const file = path.join(ROOT, 'tsconfig.json');
  const config = ts.readConfigFile(file, (name) => ts.sys.readFile(name));
  return { ...ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options, noEmit: true };
}

/** Each snippet's diagnostics, formatted (empty: it compiles), all in one program. */
function check(snippets: Record<string, string>): Record<string, string> {
  const files: Record<string, string> = { [path.join(ROOT, 'hello.ts')]: helloModule() };
  for (const [name, source] of Object.entries(snippets)) files[path.join(ROOT, `${name}.ts`)] = source;
  const options = projectOptions();
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, onError) =>
    files[name] !== undefined ? ts.createSourceFile(name, files[name], version) : read(name, version, onError);
  host.fileExists = (name) => files[name] !== undefined || ts.sys.fileExists(name);
  host.readFile = (name) => files[name] ?? ts.sys.readFile(name);
  const program = ts.createProgram(Object.keys(files), options, host);
  const out: Record<string, string> = Object.fromEntries(Object.keys(snippets).map((name) => [name, '']));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const name = diagnostic.file ? path.basename(diagnostic.file.fileName, '.ts') : 'global';
    out[name] = `${out[name] ?? ''}${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}\n`;
  }
  return out;
}

const blocks = tsBlocks(README).filter((block) => !block.startsWith('// fragment'));
const snippets = Object.fromEntries(blocks.map((block, index) => [`readme-snippet-${index + 1}`, block]));
/** What a reader hit before, checked alongside: the checker must catch it. */
const MISTAKES = {
  'top-level-await': `import { run } from './hello';\nconst started = await run({ name: 'Ada' });\nconsole.log(started.uid);\n`,
  'wrong-input': `import { run } from './hello';\nvoid run({ nom: 'Ada' });\n`,
};
// One program for all: building it loads the project's type roots once (seconds).
let diagnostics: Record<string, string>;
beforeAll(() => {
  diagnostics = check({ ...snippets, ...MISTAKES });
}, 120_000);

test('every TypeScript snippet of the README compiles as pasted into the project', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(2);
  expect(blocks.some((block) => block.includes("from './clients/typescript'"))).toBe(true);
  expect(blocks.some((block) => block.includes("from './hello'"))).toBe(true);
  expect(Object.fromEntries(Object.keys(snippets).map((name) => [name, diagnostics[name]]))).toEqual(
    Object.fromEntries(Object.keys(snippets).map((name) => [name, ''])),
  );
});

test('the check catches what a reader hit: a top-level await, and an input the circuit does not take', () => {
  expect(diagnostics['top-level-await']).toMatch(/cannot use 'await' at the top level|Top-level 'await'/);
  expect(diagnostics['wrong-input']).toMatch(/not assignable to parameter of type 'Input'/);
});
