import { Sequelize } from 'sequelize';
import { attachPipelinedConnection } from './pipelined';

export function createSequelize(databaseUrl: string, poolMax = 20): Sequelize {
  const sequelize = new Sequelize(databaseUrl, {
    dialect: 'postgres',
    logging: false,
    pool: { max: poolMax, min: 0, idle: 10_000, acquire: 30_000 },
    define: { underscored: true, timestamps: true, createdAt: 'created_at', updatedAt: 'updated_at' },
  });
  // The handle's pipelined connection (src/db/pipelined.ts) closes with it.
  const pipelined = attachPipelinedConnection(sequelize, databaseUrl);
  const close = sequelize.close.bind(sequelize);
  sequelize.close = async () => {
    await pipelined.close();
    await close();
  };
  return sequelize;
}
