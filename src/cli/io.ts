import type { Sequelize } from 'sequelize';
import type { Config } from '../config';

/** What a command's work gets from its database. */
export interface CliContext {
  config: Config;
  sequelize: Sequelize;
  /** The database's URL (commands that open their own connections, e.g. to queue runs). */
  databaseUrl: string;
  /** Migrations this command applied before running (usually none). */
  applied: string[];
}

export interface CliWriter {
  write(text: string): unknown;
}

/** Runs a command's work against a database and closes what it opened. */
export type CliDatabase = <T>(fn: (ctx: CliContext) => Promise<T>) => Promise<T>;

/**
 * What a command reads and writes, passed in rather than taken from `process`: the bin hands over the
 * process's own (processIo); a caller in another process (a test) hands over its environment and
 * collects the output.
 */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: CliWriter;
  stderr: CliWriter;
  /**
   * The database commands work on. Absent: the one `env` names (DATABASE_URL, else DATA_DIR's embedded
   * PostgreSQL), opened and migrated for each command. A caller that already holds the service's
   * database (and so its models, which are bound once per process) passes it here.
   */
  database?: CliDatabase;
}

export function processIo(): CliIo {
  return { env: process.env, stdout: process.stdout, stderr: process.stderr };
}
