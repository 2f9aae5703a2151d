import { ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The built service as a user runs it: `node dist/src/main.js` and `bin/circuits.js` as child processes,
 * each with its own DATA_DIR (and so its own embedded PostgreSQL unless DATABASE_URL is given).
 * `npm test` builds first; run `npm run build` before running such a file alone.
 */
const ROOT = path.join(__dirname, '..', '..');
const MAIN = path.join(ROOT, 'dist', 'src', 'main.js');
const BIN = path.join(ROOT, 'bin', 'circuits.js');

export interface Service {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

export interface Starting {
  /** Once the service logs "circuit service ready" (rejects with its output if it exits first, or after 60 s). */
  ready: Promise<Service>;
  exited: Promise<number | null>;
  output: () => string;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The embedded PostgreSQL's postmaster of a DATA_DIR, while its pid file exists. */
export function postmasterPid(dataDir: string): number | undefined {
  const file = path.join(dataDir, 'postgres', 'postmaster.pid');
  if (!fs.existsSync(file)) return undefined;
  return Number(fs.readFileSync(file, 'utf8').split('\n')[0]) || undefined;
}

/**
 * Services and CLI commands of one test file, and its data directories; registers the jest hooks that
 * check dist/ is built and that leave no service or PostgreSQL behind, even when a test failed half way.
 */
export function useSpawnedServices(secretKey: string) {
  const started: ChildProcess[] = [];
  const dataDirs: string[] = [];
  const env = (extra: Record<string, string>): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LOG_LEVEL: 'info',
    PORT: '0',
    SECRET_KEY: secretKey,
    JOB_LOCK_LIFETIME_MS: '5000',
    ...extra,
  });

  beforeAll(() => {
    if (!fs.existsSync(MAIN)) throw new Error('dist/ is missing: run npm run build');
  });

  afterAll(async () => {
    for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const dir of dataDirs) {
      const pid = postmasterPid(dir);
      if (pid && isAlive(pid)) process.kill(pid, 'SIGINT');
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  return {
    /** A fresh DATA_DIR, removed after the file's tests. */
    dataDir(prefix: string): string {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
      dataDirs.push(dir);
      return dir;
    },

    /** Starts `node dist/src/main.js`. */
    start(extra: Record<string, string>): Starting {
      const child = spawn(process.execPath, [MAIN], { cwd: ROOT, env: env(extra), stdio: ['ignore', 'pipe', 'pipe'] });
      started.push(child);
      let out = '';
      const output = () => out;
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const ready = new Promise<Service>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`service not ready after 60 s:\n${out}`)), 60_000);
        const onData = (chunk: Buffer) => {
          out += chunk.toString();
          for (const line of out.split('\n')) {
            if (!line.startsWith('{')) continue;
            try {
              const entry = JSON.parse(line) as { msg?: string; url?: string };
              if (entry.msg === 'circuit service ready' && entry.url) {
                clearTimeout(timer);
                resolve({ child, url: entry.url, output, exited });
                return;
              }
            } catch {
              /* partial line */
            }
          }
        };
        child.stdout!.on('data', onData);
        child.stderr!.on('data', onData);
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`service exited with ${code} before ready:\n${out}`));
        });
      });
      return { ready, exited, output };
    },

    /** Runs `bin/circuits.js` to its end; `json` is its stdout parsed, when it is JSON. */
    cli(args: string[], extra: Record<string, string>): Promise<CliResult> {
      return new Promise((resolve) => {
        execFile(
          process.execPath,
          [BIN, ...args],
          { cwd: ROOT, env: env({ LOG_LEVEL: 'silent', ...extra }), timeout: 60_000 },
          (error, stdout, stderr) => {
            let json: unknown;
            try {
              json = JSON.parse(stdout);
            } catch {
              /* not JSON */
            }
            resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr, json });
          },
        );
      });
    },
  };
}
