import { buildGraphqlSchema } from '../src/graphql/schema';
import { buildOpenApi } from './openapi';
import { loadOperations } from './operations';
import { routes } from './routes';

/** The document GET /api/v1/openapi.json serves, built without a running app (for `npm run client:generate`). */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  return buildOpenApi(routes, { schema: await buildGraphqlSchema(), document: loadOperations() });
}
