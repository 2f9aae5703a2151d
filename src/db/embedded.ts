import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { Client } from 'pg';
import { postgresIdentity, type PostgresIdentity } from './postgres-identity';
import {
  initialiseCluster,
  PostgresServer,
  randomPassword,
  type EmbeddedLog,
  type PostgresServerState,
} from './postgres-server';

export type { EmbeddedLog } from './postgres-server';

/**
 * The embedded PostgreSQL that runs when no DATABASE_URL is given. Its port is recorded in
 * `<dataDir>/postgres.json` so that the CLI can join a running service instead of starting a second
 * server on the same files; the superuser password (random per data directory) is in
 * `<dataDir>/postgres-password`, readable by the service user only.
 */
export interface EmbeddedDatabase {
  url: string;
  /** True when this process started the server (and so must stop it). */
  owned: boolean;
  /** The supervised server when owned ('running', or 'restarting' after it died). */
  state(): PostgresServerState | 'joined';
  stop(): Promise<void>;
}

const DB_NAME = 'circuits';
const USER = 'postgres';
/** The password of data directories made before passwords were random: changed at their next start. */
const LEGACY_PASSWORD = 'postgres';

interface Recorded {
  port: number;
  pid: number;
}

const recordFile = (dataDir: string) => path.join(dataDir, 'postgres.json');
const passwordFile = (dataDir: string) => path.join(dataDir, 'postgres-password');

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
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.setTimeout(500, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** PostgreSQL left running by a SIGKILLed parent holds the files: stop it before starting anew. */
function stopStale(pgDir: string): void {
  const pidFile = path.join(pgDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (pid && isAlive(pid)) {
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      /* already gone */
    }
    const deadline = Date.now() + 10_000;
    while (isAlive(pid) && Date.now() < deadline) execFileSync('sleep', ['0.1']);
  }
  if (fs.existsSync(pidFile) && !(pid && isAlive(pid))) fs.rmSync(pidFile, { force: true });
}

/** Files of a data directory made as another identity (the old `postgres` OS user, say) become ours: they are the project's own. */
function adoptDataDirectory(pgDir: string, identity: PostgresIdentity): void {
  if (identity.kind === 'self' || !fs.existsSync(pgDir)) return;
  const { uid, gid } = identity.owner;
  if (fs.statSync(pgDir).uid === uid) return;
  const walk = (file: string) => {
    fs.lchownSync(file, uid, gid);
    if (fs.lstatSync(file).isDirectory()) for (const entry of fs.readdirSync(file)) walk(path.join(file, entry));
  };
  walk(pgDir);
}

function readPassword(dataDir: string): string | undefined {
  try {
    return fs.readFileSync(passwordFile(dataDir), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

function writePassword(dataDir: string, password: string): void {
  fs.writeFileSync(passwordFile(dataDir), `${password}\n`, { mode: 0o600 });
}

/** Another service owns the embedded PostgreSQL of the data directory, and this one was not told to join it. */
export class DataDirectoryInUse extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `another circuit service (pid ${pid}) already runs on DATA_DIR ${dataDir}; stop it first, or set CIRCUIT_JOIN=1 (or DATABASE_URL) to run beside it`,
    );
  }
}

/**
 * Connects to the data dir's running PostgreSQL if there is one, else starts (and supervises) it.
 * With `exclusive` (a second service on the same files) a running one is refused (DataDirectoryInUse).
 * `settings` are extra server settings for a server this call starts (the test suite's throwaway
 * cluster skips the disk flushes a crash of the machine would need).
 */
export async function startEmbeddedDatabase(
  dataDir: string,
  log: EmbeddedLog = () => {},
  { exclusive = false, settings = {} }: { exclusive?: boolean; settings?: Record<string, string> } = {},
): Promise<EmbeddedDatabase> {
  fs.mkdirSync(dataDir, { recursive: true });
  const recorded = readRecord(dataDir);
  if (recorded && isAlive(recorded.pid) && (await canConnect(recorded.port))) {
    if (exclusive) throw new DataDirectoryInUse(dataDir, recorded.pid);
    return {
      url: urlFor(recorded.port, readPassword(dataDir) ?? LEGACY_PASSWORD),
      owned: false,
      state: () => 'joined',
      stop: async () => {},
    };
  }

  const identity = postgresIdentity();
  const pgDir = path.join(dataDir, 'postgres');
  stopStale(pgDir);
  adoptDataDirectory(pgDir, identity);
  let password = readPassword(dataDir);
  const fresh = !fs.existsSync(path.join(pgDir, 'PG_VERSION'));
  if (fresh) {
    password = randomPassword();
    await initialiseCluster(pgDir, USER, password, identity);
    writePassword(dataDir, password);
  }
  const port = await freePort();
  const server = new PostgresServer({ pgDir, port, identity, log, settings: { max_connections: '200', ...settings } });
  await server.start();
  try {
    const client = new Client({
      host: '127.0.0.1',
      port,
      user: USER,
      password: password ?? LEGACY_PASSWORD,
      database: 'postgres',
    });
    await client.connect();
    try {
      if (!password) {
        // A data directory from before random passwords: replace the well-known one.
        password = randomPassword();
        await client.query(`ALTER ROLE ${USER} PASSWORD '${password}'`);
        writePassword(dataDir, password);
      }
      const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DB_NAME]);
      if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${DB_NAME}`);
    } finally {
      await client.end();
    }
  } catch (error) {
    await server.stop();
    throw error;
  }
  log(`embedded PostgreSQL on 127.0.0.1:${port}, running as ${identity.description}`, 'info');

  fs.writeFileSync(recordFile(dataDir), JSON.stringify({ port, pid: process.pid } satisfies Recorded));
  let stopped = false;
  // However this process ends (a forced stop, an uncaught error), the server it owns ends with it.
  const onExit = () => {
    fs.rmSync(recordFile(dataDir), { force: true });
    server.signalStop();
  };
  process.once('exit', onExit);
  return {
    url: urlFor(port, password),
    owned: true,
    state: () => server.state,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      process.off('exit', onExit);
      fs.rmSync(recordFile(dataDir), { force: true });
      await server.stop();
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

function urlFor(port: number, password: string): string {
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DB_NAME}`;
}
