import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * TypeScript types of an OpenAPI document by openapi-typescript's Node API, run in a child Node process
 * (scripts/openapi-types.mjs): the package is ESM with ESM-only dependencies Jest's CommonJS mode cannot load.
 */
export function openApiTypes(document: unknown): string {
  return execFileSync(process.execPath, [path.join(__dirname, '..', '..', 'scripts', 'openapi-types.mjs')], {
    input: JSON.stringify(document), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024,
  });
}
