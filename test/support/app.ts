import { loadConfig, Config } from '../../src/config';
import { startApp, RunningApp } from '../../src/app';
import { createLogger, type Logger } from '../../src/logger';
import { createTestDatabase } from './database';
import { graphqlClient, restClient } from './http';

export interface TestApp {
  app: RunningApp;
  url: string;
  databaseUrl: string;
  /** REST under /api/v1. */
  rest: ReturnType<typeof restClient>;
  /** Any path on the server. */
  http: ReturnType<typeof restClient>;
  gql: ReturnType<typeof graphqlClient>;
  close(): Promise<void>;
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({ LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    port: 0,
    secret: 'test-secret',
    httpStepAllowPrivate: true,
    // Agenda leaves a lockLifetime/2 timer after each job; keep it under jest's exit grace.
    jobLockLifetimeMs: 1_500,
    ...overrides,
  };
}

/**
 * A real HTTP server on a fresh database; call close() in afterAll. With `databaseUrl` (another
 * test app's) it joins that database instead, as a second API process would, and never drops it.
 */
export async function startTestApp(
  overrides: Partial<Config> = {},
  options: { databaseUrl?: string; log?: Logger } = {},
): Promise<TestApp> {
  const database = options.databaseUrl
    ? { url: options.databaseUrl, drop: async () => {} }
    : await createTestDatabase();
  const config = testConfig(overrides);
  const app = await startApp({ config, databaseUrl: database.url, log: options.log ?? createLogger(config.logLevel) });
  return {
    app,
    url: app.url,
    databaseUrl: database.url,
    rest: restClient(`${app.url}/api/v1`),
    http: restClient(app.url),
    gql: graphqlClient(app.url),
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}

/**
 * The file's test app: started before its tests (beforeAll) and closed after them (afterAll), for a
 * file whose tests share one app. The object is filled in when beforeAll has run; use it in tests and
 * hooks, not at the file's top level.
 */
export function useTestApp(overrides: Partial<Config> = {}): TestApp {
  const t = {} as TestApp;
  beforeAll(async () => {
    Object.assign(t, await startTestApp(overrides));
  });
  afterAll(async () => {
    await t.close?.();
  });
  return t;
}
