import path from 'node:path';
import { CliError } from './output';

/** src/ (or dist/src/ when built). */
const SRC = path.join(__dirname, '..');

/**
 * Loads a module of another area only when a command needs it, so the CLI builds and runs its
 * other commands without it. `modulePath` is relative to src/, e.g. `commands/uploadBlob`.
 */
export function lazyRequire<T>(modulePath: string, what: string): T {
  let resolved: string;
  try {
    resolved = require.resolve(path.join(SRC, modulePath));
  } catch {
    throw new CliError(`${what} is not available in this build (src/${modulePath}.ts is missing)`);
  }
  return require(resolved) as T;
}
