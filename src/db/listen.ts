import type { Logger } from '../logger';
import { keepConnected } from './keep-connected';

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
 * LISTENs to one PostgreSQL channel on a dedicated connection, reconnecting whenever it drops (see
 * keepConnected: the first connect's failure is thrown; an outage is logged once each way).
 */
export async function listen(options: ListenOptions): Promise<Listening> {
  let closed = false;
  const kept = await keepConnected({
    databaseUrl: options.databaseUrl,
    applicationName: options.applicationName,
    log: options.log,
    name: 'LISTEN',
    logFields: { channel: options.channel },
    retryMs: options.retryMs,
    setup: async (client) => {
      client.on('notification', (message) => {
        if (!closed && message.channel === options.channel) options.onNotification(message.payload);
      });
      await client.query(`LISTEN "${options.channel.replace(/"/g, '""')}"`);
    },
    onUp: () => options.onListening?.(),
    onLost: (error) => options.onLost?.(error),
  });
  return {
    async close() {
      closed = true;
      await kept.close();
    },
  };
}
