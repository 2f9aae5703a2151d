import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startEmbeddedDatabase } from '../../src/db/embedded';
import { createSequelize } from '../../src/db/sequelize';
import { migrate } from '../../src/db/migrate';
import { initModels } from '../../src/models';

export const TEMPLATE_DB = 'circuits_test_template';

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/**
 * One PostgreSQL for the whole run: the embedded one (a fresh data dir), or the server named by
 * TEST_DATABASE_URL. A migrated template database is made once; each test file clones it.
 */
/** True when a Redis server answers PING at host:port within a second. */
function redisAnswers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let reply = '';
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

export default async function globalSetup(): Promise<void> {
  // What can run here must run here: the Redis paths (run events, rate limits) use a local Redis
  // when one answers. TEST_REDIS=off keeps them skipped.
  if (!process.env.REDIS_URL && process.env.TEST_REDIS !== 'off' && (await redisAnswers('127.0.0.1', 6379))) {
    process.env.REDIS_URL = 'redis://127.0.0.1:6379';
    console.log(
      '\nusing the Redis at 127.0.0.1:6379 for the Redis run-event and rate-limit tests (REDIS_URL; TEST_REDIS=off to skip them)',
    );
  }
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'circuits-test-'));
    // A throwaway cluster: no flush to disk at each commit, which only a crash of the machine would need
    // (a commit took 2-3 ms with it on the development machine, 0.3 ms without).
    const embedded = await startEmbeddedDatabase(dir, undefined, {
      settings: { fsync: 'off', full_page_writes: 'off' },
    });
    adminUrl = embedded.url;
    (globalThis as { __embedded?: unknown }).__embedded = { embedded, dir };
  }
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  await admin.end();

  const sequelize = createSequelize(withDatabase(adminUrl, TEMPLATE_DB), 2);
  initModels(sequelize);
  await migrate(sequelize);
  await sequelize.close();

  // Jest hides console output of suites whose tests are all skipped: say here what will not run and why.
  if (!process.env.MONGODB_URL)
    console.log(
      '\nskipped: the 4 MongoDB job store tests (test/run-optional-backends), because MONGODB_URL is unset and no MongoDB server can run here',
    );
  if (!process.env.REDIS_URL)
    console.log(
      'skipped: the Redis run-event and Redis rate-limit tests, because no Redis answers at 127.0.0.1:6379 and REDIS_URL is unset',
    );

  process.env.TEST_PG_ADMIN_URL = adminUrl;
  process.env.TEST_PG_TEMPLATE = TEMPLATE_DB;
}
