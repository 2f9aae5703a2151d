import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
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
    // The floors of the run wing (README "Project layout"): the queue knows Agenda and nothing of runs;
    // the engine executes a definition and knows neither the queue nor the run wing; the run wing knows
    // nothing of the API layers that present it; models know nothing above them.
    files: ['src/**/*.ts', 'rest-bridge/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })] },
    rules: {
      'import-x/no-restricted-paths': ['error', {
        zones: [
          { target: './src/queue', from: ['./src/runs', './src/engine', './src/graphql', './src/http', './src/web', './src/webhooks', './src/schedules', './rest-bridge'], message: 'src/queue/ is the floor under runs: it knows Agenda, not what its jobs do.' },
          { target: './src/engine', from: ['./src/runs', './src/queue', './src/graphql', './src/http', './src/web', './rest-bridge'], message: 'the engine executes a definition; the run wing (src/runs/) drives it through ExecutionContext.' },
          { target: './src/runs', from: ['./src/graphql', './src/http', './src/web', './rest-bridge'], message: 'the run wing is below the API layers that present it.' },
          // What happens to a run reaches webhooks, metrics and schedules as run events they subscribe to (src/runs/run-lifecycle.ts,
          // subscribed in src/runtime.ts); traces come in through the wing's tracer port. The wing names only the webhook event list.
          {
            target: './src/runs', from: ['./src/schedules', './src/telemetry', './src/mcp', './src/cli', './src/runtime.ts', './src/app.ts', './src/worker.ts'],
            message: 'the run wing announces what happens to runs (run-lifecycle.ts); it does not call those who listen.',
          },
          {
            target: './src/runs', from: './src/webhooks', except: ['./events.ts'],
            message: 'the run wing announces what happens to runs (run-lifecycle.ts); webhooks subscribe. It may name only the webhook event list.',
          },
          // The run wing's one front door: outside src/runs/, only src/runs/index.ts is imported.
          {
            target: ['./src/!(runs)/**', './src/*.ts', './rest-bridge/**'], from: './src/runs', except: ['./index.ts'],
            message: 'import the run wing through its front door, src/runs/index.ts.',
          },
          {
            target: ['./src/!(runs|engine)/**', './src/*.ts', './rest-bridge/**'], from: './src/services.ts',
            message: 'src/services.ts is only the engine\'s ExecutionContext.services, built by the run wing; each floor declares its own ports.',
          },
          { target: './src/models', from: ['./src/runs', './src/queue', './src/graphql', './src/http', './src/web', './rest-bridge'], message: 'models know nothing above them.' },
          { target: './rest-bridge', from: ['./src/engine', './src/runs', './src/queue', './src/credits', './src/commands', './src/policies', './src/sandbox', './src/webhooks', './src/schedules', './src/aliases', './src/storage', './src/web', './src/mcp'], message: 'the REST bridge maps paths onto GraphQL operations and holds no business logic: it reaches the domain only through the schema.' },
          { target: './rest-bridge', from: './src/auth', except: ['./token-scopes.ts'], message: 'the REST bridge holds no business logic: of authentication it may name only the token scopes (src/auth/token-scopes.ts).' },
        ],
      }],
      // Every reach into Agenda lives in src/queue/ (its tables, payloads and internals, with canaries).
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(agenda|@agendajs/.*)$', message: 'import the queue from src/queue/agenda.ts instead (QueueJob, JobDefinition, RunQueue).' }] }],
    },
  },
  {
    files: ['src/queue/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['test/**/*.ts', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
