import { Client } from 'pg';
import type { Sequelize } from 'sequelize';
import { statementName } from './prepared';

/**
 * One connection per database handle in pg's pipeline mode, for statements that many runs send at
 * once and that contend for the same rows: each run's end takes its user's balance row, so fifty runs
 * ending together on fifty pooled connections queue on that row lock, each backend sleeping and
 * being woken in turn. Sent down one pipelined connection, they are written without waiting for each
 * other's answers and executed one after another by one backend, each its own transaction (a Sync
 * after each) with its own answer or error. The connection is opened at first use, replaced after it
 * drops, and closed with the Sequelize handle (src/db/sequelize.ts).
 */
class PipelinedConnection {
  private client: Promise<Client> | undefined;
  private closed = false;

  constructor(private readonly databaseUrl: string) {}

  async query<T>(text: string, values: unknown[]): Promise<T[]> {
    const client = await this.connect();
    return (await client.query({ name: statementName(text), text, values })).rows as T[];
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = await this.client?.catch(() => undefined);
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private connect(): Promise<Client> {
    if (this.closed) return Promise.reject(new Error('the database handle is closed'));
    this.client ??= (async () => {
      const client = new Client({ connectionString: this.databaseUrl, application_name: 'circuit-pipelined', pipeline: true } as ConstructorParameters<typeof Client>[0]);
      // A lost connection fails what it carried (as a pooled one would); the next statement reconnects.
      const drop = () => {
        if (this.client === connecting) this.client = undefined;
        client.end().catch(() => {});
      };
      client.on('error', drop);
      client.on('end', drop);
      await client.connect();
      return client;
    })();
    const connecting = this.client;
    connecting.catch(() => { if (this.client === connecting) this.client = undefined; });
    return connecting;
  }
}

const connections = new WeakMap<Sequelize, PipelinedConnection>();

/** Gives `sequelize` a pipelined connection to `databaseUrl` (createSequelize does). */
export function attachPipelinedConnection(sequelize: Sequelize, databaseUrl: string): { close(): Promise<void> } {
  const connection = new PipelinedConnection(databaseUrl);
  connections.set(sequelize, connection);
  return connection;
}

/**
 * Runs a statement down the handle's pipelined connection, as a named statement; rows come back as
 * with preparedQuery, which it falls back to for a handle without one.
 */
export async function pipelinedQuery<T>(sequelize: Sequelize, text: string, values: unknown[], fallback: () => Promise<T[]>): Promise<T[]> {
  const connection = connections.get(sequelize);
  return connection ? connection.query<T>(text, values) : fallback();
}
