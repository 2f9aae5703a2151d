import { Client } from 'pg';
import type { Logger } from '../logger';

export interface ListenOptions {
  databaseUrl: string;
  channel: string;
  /** Shown in pg_stat_activity. */
  applicationName: string;
  log: Logger;
  onNotification(payload: string | undefined): void;
  /** Each time LISTEN is in place (first connect and every reconnect). */
  onListening?(): void;
  /** When the connection is lost; notifications sent until the next onListening are missed. */
  onLost?(error: Error): void;
  /** Delay between reconnect attempts. */
  retryMs?: number;
}

export interface Listening {
  /** Stops listening and ends the connection; no callback runs afterwards. */
  close(): Promise<void>;
}

/**
 * LISTENs to one PostgreSQL channel on a dedicated connection (a pooled one would be handed to
 * others) and reconnects, every `retryMs`, whenever that connection drops. The first connect's
 * failure is thrown; later ones are retried until close(). An outage is logged twice, whatever its
 * length: one warn when the connection is lost, one info when LISTEN is back (a retry every
 * `retryMs` while PostgreSQL restarts would otherwise flood the log).
 */
export async function listen(options: ListenOptions): Promise<Listening> {
  const { log, retryMs = 500 } = options;
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
    let listening = false;
    let lost = false;
    // Errors before LISTEN is in place reject connect() instead (handled by its caller).
    const onLost = (error: Error) => {
      if (!listening || lost || closed) return;
      lost = true;
      if (current === client) current = undefined;
      client.end().catch(() => {});
      // The message says enough (the server went away); its stack is pg's internals.
      outage = { since: Date.now(), failedAttempts: 0 };
      log.warn({ channel: options.channel, reason: error.message }, 'LISTEN connection lost; reconnecting');
      options.onLost?.(error);
      reconnectLater();
    };
    client.on('notification', (message) => {
      if (!closed && message.channel === options.channel) options.onNotification(message.payload);
    });
    client.on('error', onLost);
    client.on('end', () => onLost(new Error('connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN "${options.channel.replace(/"/g, '""')}"`);
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    if (closed) {
      await client.end().catch(() => {});
      return;
    }
    listening = true;
    current = client;
    if (outage) {
      log.info({ channel: options.channel, outage_ms: Date.now() - outage.since, failed_attempts: outage.failedAttempts }, 'LISTEN connection restored');
      outage = undefined;
    }
    options.onListening?.();
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
