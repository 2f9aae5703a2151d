import type { Route } from '../route';
import { BODY_UID, pageQuery, uidParam } from '../schemas';

const tag = 'Aliases';

const params = { circuit_uid: uidParam('Circuit') };
const named = { ...params, name: { type: 'string', description: 'The alias name' } };
const page = pageQuery();

/**
 * Version aliases (docs/releases.md): named, weighted pointers to versions of a circuit. Read like the
 * circuit (a private or protected circuit's aliases answer as the circuit does), written by its owner.
 */
export const aliasRoutes: Route[] = [
  {
    method: 'PUT',
    path: '/circuits/:circuit_uid/aliases/:name',
    operation: 'SetCircuitAlias',
    summary:
      'Create an alias or give it new routes (owner only); the routes it had go to its history. A rollback is a PUT of routes from the history',
    description:
      'Queries that send `context.alias` run a version drawn by these weights: the same Idempotency-Key always draws the same version. The same routes again change nothing.',
    auth: 'required',
    tag,
    params: named,
    body: {
      properties: {
        routes: {
          type: 'array',
          minItems: 1,
          maxItems: 5,
          description: '1–5 routes to versions of this circuit; whole weights 1–100 that add up to 100',
          items: {
            type: 'object',
            properties: {
              version_uid: { ...BODY_UID, description: 'A version of this circuit' },
              weight: { type: 'integer', minimum: 1, maximum: 100, description: 'Share of the queries, in percent' },
            },
            required: ['version_uid', 'weight'],
            additionalProperties: false,
          },
        },
      },
      required: ['routes'],
    },
    variables: ({ params: p, body }) => ({
      circuitUid: p.circuit_uid,
      name: p.name,
      routes: (body.routes as { version_uid: string; weight: number }[] | undefined)?.map((r) => ({
        versionUid: r.version_uid,
        weight: r.weight,
      })),
    }),
    result: 'setCircuitAlias',
  },
  {
    method: 'GET',
    path: '/circuits/:circuit_uid/aliases',
    operation: 'ListCircuitAliases',
    summary: "The circuit's aliases, by name",
    auth: 'optional',
    tag,
    params,
    query: page,
    variables: ({ params: p, query }) => ({ circuitUid: p.circuit_uid, limit: query.limit, page: query.page }),
    result: 'circuitAliases',
    shape: 'page',
  },
  {
    method: 'GET',
    path: '/circuits/:circuit_uid/aliases/:name',
    operation: 'GetCircuitAlias',
    summary: 'One alias of the circuit: its routes and when they were set',
    auth: 'optional',
    tag,
    params: named,
    variables: ({ params: p }) => ({ circuitUid: p.circuit_uid, name: p.name }),
    result: 'circuitAlias',
  },
  {
    method: 'DELETE',
    path: '/circuits/:circuit_uid/aliases/:name',
    operation: 'DeleteCircuitAlias',
    summary:
      'Delete an alias and its history (owner only); answers the alias as it was. Runs drawn from it keep its name',
    auth: 'required',
    tag,
    params: named,
    variables: ({ params: p }) => ({ circuitUid: p.circuit_uid, name: p.name }),
    result: 'deleteCircuitAlias',
  },
  {
    method: 'GET',
    path: '/circuits/:circuit_uid/aliases/:name/history',
    operation: 'ListCircuitAliasHistory',
    summary: 'Every route set the alias had before its current one, newest first',
    auth: 'optional',
    tag,
    params: named,
    query: page,
    variables: ({ params: p, query }) => ({
      circuitUid: p.circuit_uid,
      name: p.name,
      limit: query.limit,
      page: query.page,
    }),
    result: 'circuitAliasHistory',
    shape: 'page',
  },
];
