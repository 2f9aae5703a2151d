import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import noImportCycle from './eslint-rules/no-import-cycle.mjs';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.data/**', 'schema/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { console: 'readonly', process: 'readonly', require: 'readonly', module: 'writable', __dirname: 'readonly', fetch: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', AbortController: 'readonly', Headers: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly', document: 'readonly', window: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // Type-aware rules for the TypeScript sources: a promise nobody awaits or catches is a bug
    // (an unhandled rejection ends the process); `void promise` is allowed only where a comment says why.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { local: { rules: { 'no-import-cycle': noImportCycle } } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      'local/no-import-cycle': 'error',
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
