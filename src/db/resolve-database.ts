import type { Config } from '../config';
import { startEmbeddedDatabase } from './embedded';

export interface ResolvedDatabase { url: string; description: string; stop(): Promise<void> }

/** DATABASE_URL when set; otherwise the embedded PostgreSQL of DATA_DIR (joined if already running). */
export async function resolveDatabase(config: Config, log?: (line: string) => void): Promise<ResolvedDatabase> {
  if (config.databaseUrl) {
    return { url: config.databaseUrl, description: 'DATABASE_URL', stop: async () => {} };
  }
  const embedded = await startEmbeddedDatabase(config.dataDir, log);
  return { url: embedded.url, description: `embedded PostgreSQL in ${config.dataDir}`, stop: () => embedded.stop() };
}
