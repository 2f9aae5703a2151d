import { keepConnected, type KeepConnectedOptions, type KeptConnection } from './keep-connected';

/** Notifications sent while the connection is lost (from onLost to the next onListening) are missed. */
export interface ListenOptions extends Pick<
  KeepConnectedOptions,
  'databaseUrl' | 'applicationName' | 'log' | 'onLost' | 'retryMs'
> {
  channel: string;
  onNotification(payload: string | undefined): void;
  /** Each time LISTEN is in place (first connect and every reconnect). */
  onListening?(): void;
}

/** Stops listening and ends the connection; no callback runs afterwards. */
export type Listening = KeptConnection;

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
    logFields: { channel: options.channel, application: options.applicationName },
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
