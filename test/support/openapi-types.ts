import { execFile } from 'node:child_process';
import path from 'node:path';

/**
 * TypeScript types of an OpenAPI document by openapi-typescript's Node API, run in a child Node process
 * (scripts/openapi-types.mjs): the package is ESM with ESM-only dependencies Jest's CommonJS mode cannot load.
 * Asynchronous, so the test's in-process service keeps serving meanwhile (a blocked event loop leaves its idle
 * keep-alive connections to be closed by overdue timers just as the client reuses them: ECONNRESET).
 */
export function openApiTypes(document: unknown): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [path.join(__dirname, '..', '..', 'scripts', 'openapi-types.mjs')],
      {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
    child.stdin!.end(JSON.stringify(document));
  });
}
