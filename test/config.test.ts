import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, configWarnings, loadConfig } from '../src/config';

const ROOT = path.join(__dirname, '..');

function configError(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

test('defaults: port 4000 on 127.0.0.1, embedded database in ./.data, worker in process', () => {
  const config = loadConfig({});
  expect(config).toMatchObject({
    port: 4000,
    host: '127.0.0.1',
    databaseUrl: undefined,
    dataDir: path.resolve('.data'),
    runWorker: true,
    searchRateLimitPerMinute: 60,
    logLevel: 'info',
    mongodbUrl: undefined,
    gcsBucket: undefined,
  });
  expect(
    loadConfig({ PORT: '0', RUN_WORKER: 'false', DATABASE_URL: 'postgres://u:p@db:5432/x', LOG_LEVEL: 'debug' }),
  ).toMatchObject({ port: 0, runWorker: false, databaseUrl: 'postgres://u:p@db:5432/x', logLevel: 'debug' });
});

test.each([
  [{ PORT: 'abc' }, /^PORT must be a whole number, got "abc"$/],
  [{ PORT: '70000' }, /^PORT must be between 0 and 65535/],
  [{ PORT: '-1' }, /^PORT must be a whole number/],
  [{ DATABASE_URL: 'not a url' }, /^DATABASE_URL is not a valid URL$/],
  [{ DATABASE_URL: 'mysql://u@h/db' }, /^DATABASE_URL must start with postgres:\/\/ or postgresql:\/\/$/],
  [{ MONGODB_URL: 'http://x' }, /^MONGODB_URL must start with mongodb:\/\//],
  [{ RUN_WORKER: 'maybe' }, /^RUN_WORKER must be true or false, got "maybe"$/],
  [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent$/],
  [{ SEARCH_RATE_LIMIT_PER_MINUTE: '0' }, /^SEARCH_RATE_LIMIT_PER_MINUTE must be between 1/],
  [{ OPENAI_BASE_URL: 'ftp://x' }, /^OPENAI_BASE_URL must start with http:\/\/ or https:\/\//],
])('loadConfig(%j) fails with one clear line', (env, message) => {
  const text = configError(env);
  expect(text).toMatch(message);
  expect(text).not.toContain('\n');
});

test('a secret in a bad DATABASE_URL is not echoed', () => {
  expect(configError({ DATABASE_URL: 'mysql://user:hunter2@h/db' })).not.toContain('hunter2');
});

test('every bad variable is reported at once, one line each', () => {
  const error = (() => {
    try {
      loadConfig({
        PORT: 'abc',
        LOG_LEVEL: 'loud',
        RUN_WORKER: 'maybe',
        DATABASE_URL: 'mysql://h/db',
        JOB_CONCURRENCY: '0',
      });
    } catch (caught) {
      return caught as ConfigError;
    }
    throw new Error('loadConfig accepted five bad variables');
  })();
  expect(error).toBeInstanceOf(ConfigError);
  expect(error.problems).toEqual([
    expect.stringMatching(/^LOG_LEVEL must be one of/),
    'PORT must be a whole number, got "abc"',
    expect.stringMatching(/^DATABASE_URL must start with postgres:\/\//),
    'RUN_WORKER must be true or false, got "maybe"',
    expect.stringMatching(/^JOB_CONCURRENCY must be between 1 and 1000, got 0$/),
  ]);
  expect(error.message.split('\n')).toEqual(error.problems);
});

test('a process without HTTP (the worker) neither reads nor checks PORT and HOST', () => {
  expect(loadConfig({ PORT: 'abc', HOST: '' }, { http: false })).toMatchObject({ runWorker: true });
  expect(() => loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud' }, { http: false })).toThrow(
    /^LOG_LEVEL must be one of[^\n]*$/,
  );
});

test('an unset OPENAI_API_KEY is a start-up warning (llm steps would fail), a set one is not', () => {
  expect(configWarnings(loadConfig({}))).toEqual(['OPENAI_API_KEY is unset: llm steps will fail until it is set']);
  expect(configWarnings(loadConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }))).toEqual([
    'OPENAI_API_KEY is unset: llm steps will fail unless 127.0.0.1:11434 needs no key',
  ]);
  expect(configWarnings(loadConfig({ OPENAI_API_KEY: 'sk-test' }))).toEqual([]);
});

function runBuilt(
  script: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const file = path.join(ROOT, 'dist', 'src', script);
  if (!fs.existsSync(file)) throw new Error('dist/ is missing: run npm run build');
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [file],
      { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        resolve({ code: child.exitCode ?? (error ? 1 : 0), stdout, stderr });
      },
    );
  });
}

const stderrLines = (stderr: string) => stderr.split('\n').filter((line) => line !== '');

test('the service started with PORT=abc exits non-zero with exactly one line on stderr', async () => {
  const result = await runBuilt('main.js', { PORT: 'abc' });
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(stderrLines(result.stderr)).toEqual([
    expect.stringMatching(/^circuit-service: bad configuration: PORT must be a whole number, got "abc"$/),
  ]);
});

test('the service started with two bad variables prints both, one line each', async () => {
  const result = await runBuilt('main.js', { PORT: 'abc', BLOB_MAX_BYTES: 'lots' });
  expect(result.code).toBe(2);
  expect(stderrLines(result.stderr)).toEqual([
    'circuit-service: bad configuration: PORT must be a whole number, got "abc"',
    'circuit-service: bad configuration: BLOB_MAX_BYTES must be a whole number, got "lots"',
  ]);
});

test('the worker ignores PORT=abc (it serves no HTTP) but reports its other bad variables', async () => {
  const result = await runBuilt('worker.js', { PORT: 'abc', HOST: '::nope', LOG_LEVEL: 'loud' });
  expect(result.code).toBe(2);
  expect(stderrLines(result.stderr)).toEqual([
    expect.stringMatching(/^circuit-worker: bad configuration: LOG_LEVEL must be one of /),
  ]);
});

test('CORS_ORIGINS: a list of origins as browsers send them; anything else is refused', () => {
  expect(loadConfig({}).corsOrigins).toEqual([]);
  expect(loadConfig({ CORS_ORIGINS: ' https://app.example.com, http://localhost:5173/ ' }).corsOrigins).toEqual([
    'https://app.example.com',
    'http://localhost:5173',
  ]);
  expect(configError({ CORS_ORIGINS: 'https://app.example.com/path' })).toMatch(/^CORS_ORIGINS must list origins/);
  expect(configError({ CORS_ORIGINS: '*' })).toMatch(/^CORS_ORIGINS must list origins/);
  expect(configError({ CORS_ORIGINS: 'https://App.example.com' })).toMatch(/^CORS_ORIGINS must list origins/);
});
