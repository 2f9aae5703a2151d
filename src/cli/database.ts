import { QueryTypes, type Sequelize } from 'sequelize';
import { ConfigError, loadConfig, type Config, type LoadConfigOptions } from '../config';
import { resolveDatabase } from '../db/resolve-database';
import { createSequelize } from '../db/sequelize';
import type * as Migrate from '../db/migrate';
import { migrations } from '../db/migrations';
import { initModels } from '../models';
import { CliError } from './output';

export interface CliContext {
  config: Config;
  sequelize: Sequelize;
  /** The database's URL (commands that open their own connections, e.g. to queue runs). */
  databaseUrl: string;
  /** Migrations this command applied before running (usually none). */
  applied: string[];
}

/** Reads the environment like the service does; bad configuration is one line naming every problem. */
export function cliConfig(env: NodeJS.ProcessEnv = process.env, options: LoadConfigOptions = {}): Config {
  try {
    return loadConfig(env, options);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(`bad configuration: ${error.problems.join('; ')}`, 2);
    throw error;
  }
}

/**
 * Runs `fn` against the service's database: DATABASE_URL when set, otherwise the embedded PostgreSQL
 * of DATA_DIR — joined when the service is running, started (and stopped again) for this command
 * when it is not. Migrations are applied first (they are idempotent and serialised by a lock).
 */
export async function withDatabase<T>(fn: (ctx: CliContext) => Promise<T>): Promise<T> {
  const config = cliConfig();
  // Embedded PostgreSQL chatter stays out of stdout (JSON only) and out of stderr (one line on error).
  const database = await resolveDatabase(config, () => {});
  let sequelize: Sequelize | undefined;
  try {
    sequelize = createSequelize(database.url, 2);
    initModels(sequelize);
    const applied = await applyPendingMigrations(sequelize);
    return await fn({ config, sequelize, databaseUrl: database.url, applied });
  } finally {
    await sequelize?.close().catch(() => {});
    await database.stop().catch(() => {});
  }
}

/**
 * Applies the migrations this build has and the database lacks. When it lacks none (every command
 * but the first after an upgrade) one SELECT says so, and the migrator (umzug and its command-line
 * dependencies) is never loaded.
 */
async function applyPendingMigrations(sequelize: Sequelize): Promise<string[]> {
  const applied = await sequelize
    .query<{ name: string }>('SELECT name FROM schema_migrations', { type: QueryTypes.SELECT })
    .then(
      (rows) => new Set(rows.map((row) => row.name)),
      () => new Set<string>(),
    );
  if (migrations.every((migration) => applied.has(migration.name))) return [];
  const { migrate } = require('../db/migrate') as typeof Migrate;
  return migrate(sequelize);
}
