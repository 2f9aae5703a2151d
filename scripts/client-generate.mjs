// `npm run client:generate [-- --url http://host:port]`: writes clients/typescript/schema.d.ts from the
// OpenAPI document of a running service (--url) or of this checkout, built in-process (after `npm run build`).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { schemaTypes } from './openapi-types.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const urlAt = process.argv.indexOf('--url');
let document;
if (urlAt > 0) {
  const response = await fetch(new URL('/api/v1/openapi.json', process.argv[urlAt + 1]));
  if (!response.ok) throw new Error(`GET openapi.json: ${response.status}`);
  document = await response.json();
} else {
  const require = createRequire(import.meta.url);
  require('reflect-metadata');
  const { openApiDocument } = require(path.join(root, 'dist', 'rest-bridge', 'openapi-document.js'));
  document = await openApiDocument();
}
const target = path.join(root, 'clients', 'typescript', 'schema.d.ts');
fs.writeFileSync(target, await schemaTypes(document));
console.log(`wrote ${path.relative(process.cwd(), target)}`);
process.exit(0);
