import crypto from 'node:crypto';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import { ApiToken, User } from '../models';
import { createLoaders } from '../graphql/loaders';
import { getSchema } from '../graphql/schema';
import type { AppContext } from '../graphql/context';
import { loadOperations } from '../../rest-bridge/operations';
import { runRoute } from '../../rest-bridge/bridge';
import { runRoutes } from '../../rest-bridge/routes/runs';
import type { Services } from '../services';

interface Reader { schema: GraphQLSchema; document: DocumentNode }
let reader: Promise<Reader> | undefined;

/**
 * The run exactly as `GET /circuit-runs/{uid}` shows it to its owner (the REST payload, owner-only
 * fields included): the GET route's own operation runs in-process as the owner. Null when the run or
 * its owner is gone.
 */
export async function ownerViewOfRun(services: Services, runUid: string, ownerUid: string): Promise<Record<string, unknown> | null> {
  const { schema, document } = await (reader ??= getSchema().then((schema) => ({ schema, document: loadOperations() })));
  const route = runRoutes.find((r) => r.operation === 'GetCircuitRun')!;
  const owner = await User.findByPk(ownerUid);
  if (!owner) return null;
  // Resolvers see the owner as if they had called with a token of theirs (no token exists or is made).
  const token = ApiToken.build({ uid: crypto.randomUUID(), user_uid: owner.uid, token_hash: '', label: 'webhook delivery' } as never);
  const context: AppContext = {
    requestId: crypto.randomUUID(),
    auth: { kind: 'token', user: owner, token },
    viewer: owner,
    clientIp: 'internal',
    services,
    loaders: createLoaders(),
    notices: [],
    responseHeaders: {},
    baseUrl: `http://${services.config.host}:${services.config.port}`,
  };
  const response = await runRoute(schema, document, route, { params: { uid: runUid }, query: {}, body: undefined }, context, (error) =>
    services.log.error({ err: error, run: runUid }, 'internal error presenting a run for a webhook'));
  if (response.status !== 200) return null;
  return (response.body as { payload: Record<string, unknown> }).payload;
}
