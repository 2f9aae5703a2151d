import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import noImportCycle from './eslint-rules/no-import-cycle.mjs';

// The rooms above the low floors (src/domain/ to src/commands/): the run wing, the composition and the transports.
const TRANSPORTS = ['./src/graphql', './src/http', './src/web', './src/mcp', './src/a2a', './src/cli', './rest-bridge'];
const ABOVE_LOW = [
  './src/runs',
  './src/queue',
  './src/schedules',
  './src/webhooks',
  './src/services.ts',
  ...TRANSPORTS,
];
const SIDE_BY_SIDE = ['./src/auth', './src/credits', './src/aliases', './src/views'];
const LOW_ABOVE_POLICIES = [...SIDE_BY_SIDE, './src/engine', './src/commands', './src/clients'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.data/**', 'schema/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        console: 'readonly',
        process: 'readonly',
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        fetch: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
        AbortController: 'readonly',
        Headers: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        document: 'readonly',
        window: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
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
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './src/queue',
              from: [
                './src/runs',
                './src/engine',
                './src/graphql',
                './src/http',
                './src/web',
                './src/webhooks',
                './src/schedules',
                './rest-bridge',
              ],
              message: 'src/queue/ is the floor under runs: it knows Agenda, not what its jobs do.',
            },
            {
              target: './src/engine',
              from: ['./src/runs', './src/queue', './src/graphql', './src/http', './src/web', './rest-bridge'],
              message: 'the engine executes a definition; the run wing (src/runs/) drives it through ExecutionContext.',
            },
            {
              target: './src/engine',
              from: ['./src/services.ts', './src/telemetry/run-metrics.ts'],
              message:
                'the engine gets what it uses as EngineDeps (src/engine/ports.ts), not the Services bag or the metrics store.',
            },
            {
              target: './src/runs',
              from: ['./src/graphql', './src/http', './src/web', './rest-bridge'],
              message: 'the run wing is below the API layers that present it.',
            },
            // What happens to a run reaches webhooks, metrics and schedules as run events they subscribe to (src/runs/run-lifecycle.ts,
            // subscribed in src/runtime.ts); traces come in through the wing's tracer port. The wing names only the webhook event list.
            {
              target: './src/runs',
              from: [
                './src/schedules',
                './src/telemetry',
                './src/mcp',
                './src/a2a',
                './src/cli',
                './src/runtime.ts',
                './src/app.ts',
                './src/worker.ts',
              ],
              message:
                'the run wing announces what happens to runs (run-lifecycle.ts); it does not call those who listen.',
            },
            {
              target: './src/runs',
              from: './src/webhooks',
              except: ['./events.ts'],
              message:
                'the run wing announces what happens to runs (run-lifecycle.ts); webhooks subscribe. It may name only the webhook event list.',
            },
            // The run wing's one front door: outside src/runs/, only src/runs/index.ts is imported.
            {
              target: ['./src/!(runs)/**', './src/*.ts', './rest-bridge/**'],
              from: './src/runs',
              except: ['./index.ts'],
              message: 'import the run wing through its front door, src/runs/index.ts.',
            },
            {
              target: ['./src/!(runs|engine)/**', './src/*.ts', './rest-bridge/**'],
              from: './src/services.ts',
              message:
                "src/services.ts is only the engine's ExecutionContext.services, built by the run wing; each floor declares its own ports.",
            },
            {
              target: './src/models',
              from: ['./src/runs', './src/queue', './src/graphql', './src/http', './src/web', './rest-bridge'],
              message: 'models know nothing above them.',
            },
            {
              target: './rest-bridge',
              from: [
                './src/engine',
                './src/runs',
                './src/queue',
                './src/credits',
                './src/commands',
                './src/policies',
                './src/sandbox',
                './src/webhooks',
                './src/schedules',
                './src/aliases',
                './src/storage',
                './src/web',
                './src/mcp',
                './src/a2a',
              ],
              message:
                'the REST bridge maps paths onto GraphQL operations and holds no business logic: it reaches the domain only through the schema.',
            },
            {
              target: './rest-bridge',
              from: ['./src/auth', './src/models', './src/http'],
              message:
                'the REST bridge holds no business logic: the token scopes and run constants it names are in src/domain/ (no Sequelize); ' +
                'src/http/ is above it.',
            },
            // The low floors, bottom up: src/domain/ (plain types and constants) < src/models/ < src/policies/ < src/auth/, src/credits/,
            // src/aliases/, src/views/ (side by side; views may read credits) < src/engine/ < src/commands/ < the run wing and the transports.
            ...[{ from: './src', except: ['./domain'] }, { from: './rest-bridge' }].map((zone) => ({
              target: './src/domain',
              ...zone,
              message: 'src/domain/ is the ground floor: plain types and constants that import nothing outside it.',
            })),
            {
              // The run wing, the queue and the API layers are in the zone above.
              target: './src/models',
              from: [
                './src/schedules',
                './src/webhooks',
                './src/services.ts',
                './src/mcp',
                './src/a2a',
                './src/cli',
                './src/policies',
                ...LOW_ABOVE_POLICIES,
              ],
              message: 'models are the floor under policies, auth, credits, aliases, views, the engine and commands.',
            },
            {
              target: './src/policies',
              from: [...ABOVE_LOW, ...LOW_ABOVE_POLICIES],
              message:
                'policies are below auth, credits, aliases, views, the engine and commands: they read models and src/domain/.',
            },
            ...SIDE_BY_SIDE.map((room) => ({
              target: room,
              from: [
                ...ABOVE_LOW,
                ...SIDE_BY_SIDE.filter(
                  (other) => other !== room && !(room === './src/views' && other === './src/credits'),
                ),
                './src/engine',
                './src/commands',
              ],
              message:
                'src/auth/, src/credits/, src/aliases/ and src/views/ stand side by side above policies: none imports another ' +
                '(but a view may show what src/credits/ counts), nor the floors above.',
            })),
            {
              target: './src/engine',
              from: './src/commands',
              message: 'commands are above the engine (they validate definitions through it).',
            },
            {
              target: './src/commands',
              from: ABOVE_LOW,
              message: 'commands are the top of the low floors: the run wing and the transports call them.',
            },
            // The transports, bottom up: src/error-status.ts and src/streams/ (shared by all) < src/graphql/ < rest-bridge/ < src/http/.
            {
              target: ['./src/error-status.ts', './src/streams'],
              from: [...TRANSPORTS, './src/services.ts'],
              message: 'the error→status table and paced writes are under every transport.',
            },
            {
              target: './src/graphql',
              from: ['./src/http', './rest-bridge', './src/web', './src/mcp', './src/a2a', './src/cli'],
              message: 'GraphQL is the floor under the REST bridge and src/http/.',
            },
          ],
        },
      ],
      // Every reach into Agenda lives in src/queue/ (its tables, payloads and internals, with canaries).
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(agenda|@agendajs/.*)$',
              message: 'import the queue from src/queue/agenda.ts instead (QueueJob, JobDefinition, RunQueue).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/queue/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    // The ground floor loads no package either (no Sequelize): the REST bridge, the clients and the CLI's --help read it.
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ regex: '^[^.]', message: 'src/domain/ imports nothing outside it: plain types and constants.' }],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
