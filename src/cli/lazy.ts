import { CliError } from './output';

/**
 * Loads a module of another area only when a command needs it, so the CLI builds and runs its
 * other commands without it. `request` is resolved relative to this directory (src/cli or dist/src/cli).
 */
export function lazyRequire<T>(request: string, what: string): T {
  let resolved: string;
  try {
    resolved = require.resolve(request);
  } catch {
    throw new CliError(`${what} is not available in this build (${request.replace(/^\.\.\//, 'src/')} is missing)`);
  }
  return require(resolved) as T;
}
