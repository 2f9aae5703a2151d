import crypto from 'node:crypto';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import { User } from '../models';
import type { AppContext } from '../graphql/context';
import type * as Schema from '../graphql/schema';
import type * as Loaders from '../graphql/loaders';
import type * as Operations from '../../rest-bridge/operations';
import type * as Bridge from '../../rest-bridge/bridge';
import type * as RunRoutes from '../../rest-bridge/routes/runs';
import type { Route } from '../../rest-bridge/route';
import type { Services } from '../services';

interface Reader { schema: GraphQLSchema; document: DocumentNode; route: Route; runRoute: typeof Bridge.runRoute; createLoaders: typeof Loaders.createLoaders }
let reader: Promise<Reader> | undefined;

/**
 * The GraphQL schema and the REST bridge, loaded on the first delivery: a worker that never delivers
 * a webhook does not pay for loading them at start (seconds on a busy machine).
 */
async function loadReader(): Promise<Reader> {
  const { getSchema } = require('../graphql/schema') as typeof Schema;
  const { loadOperations } = require('../../rest-bridge/operations') as typeof Operations;
  const { runRoute } = require('../../rest-bridge/bridge') as typeof Bridge;
  const { runRoutes } = require('../../rest-bridge/routes/runs') as typeof RunRoutes;
  const { createLoaders } = require('../graphql/loaders') as typeof Loaders;
  const route = runRoutes.find((r) => r.operation === 'GetCircuitRun');
  if (!route) throw new Error('the GetCircuitRun route is missing');
  return { schema: await getSchema(), document: loadOperations(), route, runRoute, createLoaders };
}

/**
 * The run exactly as `GET /circuit-runs/{uid}` shows it to its owner (the REST payload, owner-only
 * fields included): the GET route's own operation runs in-process as the owner. Null when the run or
 * its owner is gone.
 */
export async function ownerViewOfRun(services: Services, runUid: string, ownerUid: string): Promise<Record<string, unknown> | null> {
  const { schema, document, route, runRoute, createLoaders } = await (reader ??= loadReader().catch((error: unknown) => {
    reader = undefined;
    throw error;
  }));
  const owner = await User.findByPk(ownerUid);
  if (!owner) return null;
  // Resolvers see the owner as if they had called with a token of theirs (no token exists or is made).
  const context: AppContext = {
    requestId: crypto.randomUUID(),
    auth: { kind: 'token', user: owner },
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
