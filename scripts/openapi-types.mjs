// OpenAPI document (stdin, JSON) → TypeScript types of it (stdout), with openapi-typescript (docs/typed-clients.md).
// Used by `npm run client:generate` and by the tests that check the committed client is current.
import openapiTS, { astToString } from 'openapi-typescript';

export const HEADER =
  '// Generated from GET /api/v1/openapi.json by `npm run client:generate` (openapi-typescript). Do not edit.\n\n';

export async function schemaTypes(document) {
  return HEADER + astToString(await openapiTS(document, { alphabetize: false }));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  process.stdout.write(await schemaTypes(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
}
