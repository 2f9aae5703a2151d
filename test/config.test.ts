import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../src/config';

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
    port: 4000, host: '127.0.0.1', databaseUrl: undefined, dataDir: path.resolve('.data'), runWorker: true,
    searchRateLimitPerMinute: 60, logLevel: 'info', mongodbUrl: undefined, gcsBucket: undefined,
  });
  expect(loadConfig({ PORT: '0', RUN_WORKER: 'false', DATABASE_URL: 'postgres://u:p@db:5432/x', LOG_LEVEL: 'debug' }))
    .toMatchObject({ port: 0, runWorker: false, databaseUrl: 'postgres://u:p@db:5432/x', logLevel: 'debug' });
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

test('the service started with PORT=abc exits non-zero with exactly one line on stderr', async () => {
  const main = path.join(ROOT, 'dist', 'src', 'main.js');
  if (!fs.existsSync(main)) throw new Error('dist/ is missing: run npm run build');
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(process.execPath, [main], { cwd: ROOT, env: { PATH: process.env.PATH, PORT: 'abc' }, timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: child.exitCode ?? (error ? 1 : 0), stdout, stderr });
    });
  });
  expect(result.code).not.toBe(0);
  expect(result.stdout).toBe('');
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  expect(lines).toEqual([expect.stringMatching(/PORT must be a whole number, got "abc"/)]);
});
