import os from 'node:os';
import { Client } from 'pg';
import type { Logger } from '../logger';
import type { RunWorkerIdentity } from './execute-run.job';

/**
 * A worker process's presence in PostgreSQL: one idle connection whose backend pid is written on the
 * runs it claims. The backend lives exactly as long as the process holds the connection, so another
 * worker can tell a dead worker (backend gone: take its run over) from a slow one (backend alive:
 * leave its run alone, however late its heartbeat). Reconnects when the connection drops.
 */
export async function startWorkerPresence(databaseUrl: string, log: Logger): Promise<RunWorkerIdentity & { close(): Promise<void> }> {
  const name = `${os.hostname()}:${process.pid}`;
  let backendPid: number | null = null;
  let client: Client | undefined;
  let closed = false;
  const connect = async (): Promise<void> => {
    const next = new Client({ connectionString: databaseUrl, application_name: 'circuit-worker-presence' });
    next.on('error', (error) => {
      log.warn({ err: error }, 'worker presence connection lost; reconnecting');
      backendPid = null;
      next.end().catch(() => {});
      if (!closed) setTimeout(() => { connect().catch((e: unknown) => log.warn({ err: e }, 'worker presence reconnect failed')); }, 500).unref();
    });
    await next.connect();
    const { rows } = await next.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    client = next;
    backendPid = rows[0].pid;
  };
  await connect();
  return {
    current: () => ({ name, backendPid }),
    async close() {
      closed = true;
      await client?.end().catch(() => {});
    },
  };
}
