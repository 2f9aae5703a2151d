import type { Config } from '../config';
import { startEmbeddedDatabase, type EmbeddedLog } from './embedded';

/**
 * What a log line may say about the database: where it is, never its credentials. `database` is
 * `embedded` (this DATA_DIR's own PostgreSQL) or `external` (DATABASE_URL).
 */
export type DatabaseLogFields =
  | { database: 'embedded'; databasePort: number; dataDir: string }
  | { database: 'external'; databaseHost: string; databasePort: number; databaseName: string };

export interface ResolvedDatabase {
  url: string;
  logFields: DatabaseLogFields;
  /** 'external' for DATABASE_URL; otherwise the embedded server's state ('restarting' while it recovers). */
  state(): string;
  stop(): Promise<void>;
}

const portOf = (url: URL) => Number(url.port || 5432);

/** The log fields of an external PostgreSQL's URL: host, port and database name; its user and password left out. */
export function externalLogFields(databaseUrl: string): DatabaseLogFields {
  const url = new URL(databaseUrl);
  return {
    database: 'external',
    databaseHost: url.hostname,
    databasePort: portOf(url),
    databaseName: decodeURIComponent(url.pathname.replace(/^\//, '')),
  };
}

/** The log fields of the embedded PostgreSQL of `dataDir`, listening at `databaseUrl`. */
export function embeddedLogFields(databaseUrl: string, dataDir: string): DatabaseLogFields {
  return { database: 'embedded', databasePort: portOf(new URL(databaseUrl)), dataDir };
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
    return {
      url: config.databaseUrl,
      logFields: externalLogFields(config.databaseUrl),
      state: () => 'external',
      stop: async () => {},
    };
  }
  const embedded = await startEmbeddedDatabase(config.dataDir, log, options);
  return {
    url: embedded.url,
    logFields: embeddedLogFields(embedded.url, config.dataDir),
    state: embedded.state,
    stop: () => embedded.stop(),
  };
}
