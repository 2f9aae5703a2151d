import { Sequelize } from 'sequelize';
import { Umzug, SequelizeStorage } from 'umzug';
import { migrations } from './migrations';

/** Versioned schema changes; never sync({alter}). Each migration runs once, in order, recorded in schema_migrations. */
export function createMigrator(sequelize: Sequelize) {
  return new Umzug({
    migrations: migrations.map((m) => ({
      name: m.name,
      up: () => sequelize.query(m.up),
      down: async () => {
        if (m.down) await sequelize.query(m.down);
      },
    })),
    context: sequelize,
    storage: new SequelizeStorage({ sequelize, tableName: 'schema_migrations' }),
    logger: undefined,
  });
}

/** Applies every pending migration; the names applied. */
export async function runMigrations(sequelize: Sequelize): Promise<string[]> {
  // Several processes may start at once on one database: one migrates, the others wait for it.
  return sequelize.transaction(async (t) => {
    await sequelize.query('SELECT pg_advisory_xact_lock(4242001)', { transaction: t });
    const applied = await createMigrator(sequelize).up();
    return applied.map((m) => m.name);
  });
}
