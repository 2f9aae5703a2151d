/**
 * Where the service reaches into a library's internals: Sequelize here, Agenda (its tables, payloads and
 * internals) in src/queue/agenda-internals.ts — nowhere else. Each patch was
 * written against the versions in WRITTEN_FOR (pinned exactly in package.json), checks the shape it
 * relies on when applied and throws LibraryInternalsChanged instead of silently doing nothing, and is
 * exercised by test/library-patches.test.ts, which fails loudly on an upgrade that changes them.
 */
export const WRITTEN_FOR = {
  agenda: '6.2.6',
  '@agendajs/postgres-backend': '3.0.6',
  '@agendajs/mongo-backend': '4.0.3',
  sequelize: '6.37.8',
} as const;

export class LibraryInternalsChanged extends Error {
  constructor(what: string) {
    super(
      `library internals changed: ${what} (src/library-patches.ts and src/queue/agenda-internals.ts were written for ${Object.entries(
        WRITTEN_FOR,
      )
        .map(([name, version]) => `${name}@${version}`)
        .join(', ')})`,
    );
  }
}

/** Throws LibraryInternalsChanged unless `owner[method]` is a function. */
export function requireMethod(owner: unknown, method: string, what: string): void {
  if (typeof (owner as Record<string, unknown> | undefined)?.[method] !== 'function')
    throw new LibraryInternalsChanged(`${what}.${method} is not a function`);
}

// ---------------------------------------------------------------------------------------------
// Sequelize: a raw connection of its pool (src/db/prepared.ts)

export interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}
export interface PooledConnections {
  getConnection(options: object): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): void;
}

/** Sequelize's (undocumented) connectionManager: a raw node-postgres client from its pool. */
export function sequelizeConnections(sequelize: unknown): PooledConnections {
  const manager = (sequelize as { connectionManager?: PooledConnections }).connectionManager;
  requireMethod(manager, 'getConnection', 'Sequelize connectionManager');
  requireMethod(manager, 'releaseConnection', 'Sequelize connectionManager');
  return manager!;
}

/** The node-postgres client a Sequelize transaction runs on (Transaction.connection, undocumented). */
export function transactionConnection(transaction: unknown): PgConnection | undefined {
  const connection = (transaction as { connection?: PgConnection } | null | undefined)?.connection;
  if (transaction && connection === undefined)
    throw new LibraryInternalsChanged('Sequelize Transaction.connection is missing');
  return connection;
}
