import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../../src/cli';
import type { CliDatabase } from '../../src/cli/io';

/**
 * The operator CLI two ways: `cliBin` runs the built bin as a child process (its exit code, its whole
 * stdout and stderr: what an operator's shell sees; `npm test` builds first, run `npm run build` before
 * such a file alone); `cliInProcess` runs the same commands through `runCli` in this process, without
 * a Node start and module load per command, for tests whose point is what a command does and prints.
 */
const ROOT = path.join(__dirname, '..', '..');
export const BIN = path.join(ROOT, 'bin', 'circuits.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

function parsed(code: number, stdout: string, stderr: string): CliResult {
  let json: unknown;
  try {
    json = stdout ? JSON.parse(stdout) : undefined;
  } catch {
    /* not JSON */
  }
  return { code, stdout, stderr, json };
}

export function assertBuilt(): void {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'src', 'cli', 'index.js')))
    throw new Error('dist/ is missing: run npm run build');
}

/** `node bin/circuits.js …args` with exactly `env` (plus PATH and HOME), run to its end. */
export function cliBin(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve(parsed(error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr)),
    );
  });
}

/**
 * The same command through `runCli` in this process, with `env` as its whole environment. With
 * `database`, commands work on that database (a test app's, whose models this process has bound)
 * instead of opening the one `env` names.
 */
export async function cliInProcess(
  args: string[],
  env: Record<string, string>,
  database?: CliDatabase,
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const { code } = await runCli([process.execPath, BIN, ...args], {
    env: { ...env },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    database,
  });
  return parsed(code, stdout, stderr);
}
