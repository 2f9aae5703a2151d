import { QueryTypes, type Sequelize } from 'sequelize';
import { migrations } from './migrations';
import type * as Migrator from './migrator';

/**
 * Applies the migrations this build has and the database lacks; the names applied. When it lacks none
 * (every start but the first after an upgrade) one SELECT says so, and the migrator (umzug and its
 * command-line dependencies, ~0.3 s to load) is never loaded.
 */
export async function migrate(sequelize: Sequelize): Promise<string[]> {
  const applied = await sequelize
    .query<{ name: string }>('SELECT name FROM schema_migrations', { type: QueryTypes.SELECT })
    .then(
      (rows) => new Set(rows.map((row) => row.name)),
      () => new Set<string>(),
    );
  if (migrations.every((migration) => applied.has(migration.name))) return [];
  const { runMigrations } = require('./migrator') as typeof Migrator;
  return runMigrations(sequelize);
}
