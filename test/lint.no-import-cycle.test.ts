import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The local lint rule eslint-rules/no-import-cycle.mjs on a throwaway project: a cycle made only of
 * `import type` is reported at both imports, as is one through a re-export; modules that import a
 * shared leaf are not. Run as a child ESLint, like `npm run lint` (the rule is an ES module).
 */
const ROOT = path.join(__dirname, '..');
let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'no-import-cycle-'));
  const url = (file: string) => pathToFileURL(file).href;
  fs.writeFileSync(
    path.join(dir, 'eslint.config.mjs'),
    `
    import tseslint from '${url(require.resolve('typescript-eslint'))}';
    import rule from '${url(path.join(ROOT, 'eslint-rules', 'no-import-cycle.mjs'))}';
    export default [{
      files: ['**/*.ts'],
      languageOptions: { parser: tseslint.parser },
      plugins: { local: { rules: { 'no-import-cycle': rule } } },
      rules: { 'local/no-import-cycle': 'error' },
    }];
  `,
  );
  const files: Record<string, string> = {
    'types-a.ts': "import type { B } from './types-b';\nexport interface A { b?: B }\n",
    'types-b.ts': "import type { A } from './types-a';\nexport interface B { a?: A }\n",
    'reexport-a.ts': "export { b } from './reexport-b';\nexport const a = 1;\n",
    'reexport-b.ts': "import { a } from './reexport-a';\nexport const b = a + 1;\n",
    'leaf.ts': 'export type Leaf = string;\n',
    'user-1.ts':
      "import type { Leaf } from './leaf';\nimport { two } from './user-2';\nexport const one: Leaf = two;\n",
    'user-2.ts': "import type { Leaf } from './leaf';\nexport const two: Leaf = 'x';\n",
  };
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function lint(): Promise<{ filePath: string; messages: { line: number; message: string }[] }[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(path.dirname(require.resolve('eslint/package.json')), 'bin', 'eslint.js'), '--format', 'json', '*.ts'],
      { cwd: dir, timeout: 60_000 },
      (error, stdout, stderr) => {
        // ESLint exits 1 when it reports problems; anything else is a failure to lint.
        if (error && error.code !== 1) reject(new Error(`eslint failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout));
      },
    );
  });
}

test('type-only and re-export cycles are reported at each import, with the way round; a shared leaf is no cycle', async () => {
  const reported = Object.fromEntries(
    (await lint()).map((result) => [
      path.basename(result.filePath),
      result.messages.map((m) => `${m.line}: ${m.message}`),
    ]),
  );
  expect(reported).toEqual({
    'types-a.ts': ['1: Import cycle: types-a.ts → types-b.ts → types-a.ts'],
    'types-b.ts': ['1: Import cycle: types-b.ts → types-a.ts → types-b.ts'],
    'reexport-a.ts': ['1: Import cycle: reexport-a.ts → reexport-b.ts → reexport-a.ts'],
    'reexport-b.ts': ['1: Import cycle: reexport-b.ts → reexport-a.ts → reexport-b.ts'],
    'leaf.ts': [],
    'user-1.ts': [],
    'user-2.ts': [],
  });
});
