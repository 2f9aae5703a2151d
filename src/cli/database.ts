import type { Sequelize } from 'sequelize';
import { ConfigError, loadConfig, type Config, type LoadConfigOptions } from '../config';
import { resolveDatabase } from '../db/resolve-database';
import { createSequelize } from '../db/sequelize';
import { migrate } from '../db/migrate';
import { initModels } from '../models';
import { CliError } from './output';
import type { CliContext, CliIo } from './io';

/** Reads the environment like the service does; bad configuration is one line naming every problem. */
export function cliConfig(env: NodeJS.ProcessEnv, options: LoadConfigOptions = {}): Config {
  try {
    return loadConfig(env, options);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(`bad configuration: ${error.problems.join('; ')}`, 2);
    throw error;
  }
}

/**
 * Runs `fn` against the database `io` hands over, else the service's database as `io.env` names it:
 * DATABASE_URL when set, otherwise the embedded PostgreSQL of DATA_DIR — joined when the service is
 * running, started (and stopped again) for this command when it is not. Migrations are applied first
 * (they are idempotent and serialised by a lock).
 */
export async function withDatabase<T>(
  io: Pick<CliIo, 'env' | 'database'>,
  fn: (ctx: CliContext) => Promise<T>,
): Promise<T> {
  if (io.database) return io.database(fn);
  const config = cliConfig(io.env);
  // Embedded PostgreSQL chatter stays out of stdout (JSON only) and out of stderr (one line on error).
  const database = await resolveDatabase(config, () => {});
  let sequelize: Sequelize | undefined;
  try {
    sequelize = createSequelize(database.url, 2);
    initModels(sequelize);
    const applied = await migrate(sequelize);
    return await fn({ config, sequelize, databaseUrl: database.url, applied });
  } finally {
    await sequelize?.close().catch(() => {});
    await database.stop().catch(() => {});
  }
}
