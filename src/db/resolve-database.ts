import type { Config } from '../config';
import { startEmbeddedDatabase, type EmbeddedLog } from './embedded';

export interface ResolvedDatabase {
  url: string;
  description: string;
  /** 'external' for DATABASE_URL; otherwise the embedded server's state ('restarting' while it recovers). */
  state(): string;
  stop(): Promise<void>;
}

/**
 * DATABASE_URL when set; otherwise the embedded PostgreSQL of DATA_DIR (joined if already running, or
 * refused with `exclusive`: the service is the single owner of its data directory unless CIRCUIT_JOIN).
 */
export async function resolveDatabase(
  config: Config,
  log?: EmbeddedLog,
  options: { exclusive?: boolean } = {},
): Promise<ResolvedDatabase> {
  if (config.databaseUrl) {
    return { url: config.databaseUrl, description: 'DATABASE_URL', state: () => 'external', stop: async () => {} };
  }
  const embedded = await startEmbeddedDatabase(config.dataDir, log, options);
  return {
    url: embedded.url,
    description: `embedded PostgreSQL in ${config.dataDir}`,
    state: embedded.state,
    stop: () => embedded.stop(),
  };
}
