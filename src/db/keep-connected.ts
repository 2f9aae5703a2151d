import { Client } from 'pg';
import type { Logger } from '../logger';

export interface KeepConnectedOptions {
  databaseUrl: string;
  /** Shown in pg_stat_activity. */
  applicationName: string;
  log: Logger;
  /** What the log lines call the connection ("LISTEN connection lost"), and fields they carry. */
  name: string;
  logFields?: Record<string, unknown>;
  /** Runs on each new connection (LISTEN, reading the backend pid); it is up once this resolves. */
  setup(client: Client): Promise<void>;
  /** Each time the connection is up (first connect and every reconnect). */
  onUp?(): void;
  /** When the connection is lost; it is down until the next onUp. */
  onLost?(error: Error): void;
  /** Delay between reconnect attempts. */
  retryMs?: number;
}

export interface KeptConnection {
  /** Ends the connection and stops reconnecting; no callback runs afterwards. */
  close(): Promise<void>;
}

/**
 * Holds one dedicated PostgreSQL connection (a pooled one would be handed to others) and reconnects,
 * every `retryMs`, whenever it drops. The first connect's failure is thrown; later ones are retried
 * until close(). An outage is logged twice, whatever its length: one warn when the connection is
 * lost and one info when it is back. A line per retry would flood the log while PostgreSQL restarts,
 * and a stack says nothing more than "the server went away".
 */
export async function keepConnected(options: KeepConnectedOptions): Promise<KeptConnection> {
  const { log, name, logFields, retryMs = 500 } = options;
  let closed = false;
  let current: Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  /** Set while the connection is lost: since when, and how many reconnects failed. */
  let outage: { since: number; failedAttempts: number } | undefined;

  const reconnectLater = () => {
    if (closed) return;
    retry = setTimeout(() => {
      connect().catch(() => {
        if (outage) outage.failedAttempts += 1;
        reconnectLater();
      });
    }, retryMs);
    retry.unref();
  };

  const connect = async (): Promise<void> => {
    const client = new Client({ connectionString: options.databaseUrl, application_name: options.applicationName });
    let up = false;
    let lost = false;
    // Errors before setup is done reject connect() instead (handled by its caller).
    const onLost = (error: Error) => {
      if (!up || lost || closed) return;
      lost = true;
      if (current === client) current = undefined;
      client.end().catch(() => {});
      outage = { since: Date.now(), failedAttempts: 0 };
      log.warn({ ...logFields, reason: error.message }, `${name} connection lost; reconnecting`);
      options.onLost?.(error);
      reconnectLater();
    };
    client.on('error', onLost);
    client.on('end', () => onLost(new Error('connection ended')));
    try {
      await client.connect();
      await options.setup(client);
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    if (closed) {
      await client.end().catch(() => {});
      return;
    }
    up = true;
    current = client;
    if (outage) {
      log.info(
        { ...logFields, outage_ms: Date.now() - outage.since, failed_attempts: outage.failedAttempts },
        `${name} connection restored`,
      );
      outage = undefined;
    }
    options.onUp?.();
  };

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await current?.end().catch(() => {});
      current = undefined;
    },
  };
}
