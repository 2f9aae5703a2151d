import os from 'node:os';
import type { Logger } from '../logger';
import { keepConnected } from '../db/keep-connected';
import type { RunWorkerIdentity } from './execute';

/**
 * A worker process's presence in PostgreSQL: one idle connection whose backend pid is written on the
 * runs it claims. The backend lives exactly as long as the process holds the connection, so another
 * worker can tell a dead worker (backend gone: take its run over) from a slow one (backend alive:
 * leave its run alone, however late its heartbeat). Reconnects whenever the connection drops.
 */
export async function startWorkerPresence(
  databaseUrl: string,
  log: Logger,
): Promise<RunWorkerIdentity & { close(): Promise<void> }> {
  const name = `${os.hostname()}:${process.pid}`;
  let backendPid: number | null = null;
  const kept = await keepConnected({
    databaseUrl,
    applicationName: 'circuit-worker-presence',
    log,
    name: 'worker presence',
    setup: async (client) => {
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      backendPid = rows[0].pid;
    },
    onLost: () => {
      backendPid = null;
    },
  });
  return {
    current: () => ({ name, backendPid }),
    close: () => kept.close(),
  };
}
