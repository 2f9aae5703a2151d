import type { Route } from '../route';
import { BODY_UID, pageQuery, uidParam } from '../schemas';

const tag = 'Circuits';

const page = pageQuery();
const circuitUid = { circuit_uid: uidParam('Circuit') };

export const circuitRoutes: Route[] = [
  {
    method: 'POST',
    path: '/circuits',
    operation: 'CreateCircuit',
    summary: 'Create a circuit owned by the caller',
    auth: 'required',
    tag,
    body: {
      properties: {
        name: { type: 'string', description: "Unique among the caller's circuits; url-safe" },
        description: { type: 'string' },
        is_private: { type: 'boolean', description: 'Default false: only the owner sees or runs a private circuit' },
        is_protected: {
          type: 'boolean',
          description:
            "Default false: listed and runnable by anyone, but its object, versions and explain need the owner's token",
        },
        license_type: { type: 'string', description: 'A license identifier, e.g. MIT' },
        user_circuit_metric_uid: {
          ...BODY_UID,
          description: 'An existing metric configuration of the caller to attach',
        },
      },
      required: ['name'],
    },
    errors: { Conflict: 'The caller already has a circuit of that name' },
    variables: ({ body }) => ({
      input: {
        name: body.name,
        description: body.description,
        isPrivate: body.is_private,
        isProtected: body.is_protected,
        licenseType: body.license_type,
        userCircuitMetricUid: body.user_circuit_metric_uid,
      },
    }),
    result: 'createCircuit',
  },
  {
    method: 'GET',
    path: '/circuits/:circuit_uid',
    operation: 'GetCircuit',
    summary: 'Fetch a circuit by uid',
    auth: 'optional',
    tag,
    params: circuitUid,
    variables: ({ params }) => ({ uid: params.circuit_uid }),
    result: 'circuit',
  },
  {
    method: 'GET',
    path: '/circuits/:circuit_uid/client.ts',
    operation: 'GetCircuitClientModule',
    summary:
      "A dependency-free TypeScript module for this circuit, typed from a version's query_schema and output_schema: run(input, options), waitFor(uid, options), events(uid, options)",
    description:
      'The types come from the primary version, `version`, or the version `alias` draws (run() then sends the alias, so each run is drawn by its weights). The module compiles under `tsc --strict`; an input that does not fit the query schema fails to compile. Same read rules as GET /circuits/{uid}.',
    auth: 'optional',
    tag,
    params: circuitUid,
    query: {
      version: {
        schema: { type: 'string', format: 'uuid' },
        description: 'A version of this circuit (default: the primary version)',
      },
      alias: {
        schema: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,31}$' },
        description: 'Instead of version: an alias of this circuit',
      },
    },
    errors: {
      NotFound: 'No such circuit, version of it, alias of it, or primary version',
      BadClientData: 'Both version and alias were sent',
    },
    variables: ({ params, query }) => ({ uid: params.circuit_uid, version: query.version, alias: query.alias }),
    result: 'circuitClientModule',
    shape: 'typescript',
  },
  {
    method: 'GET',
    path: '/users/:username/circuits/:circuit_name',
    operation: 'GetCircuitByName',
    summary: 'Fetch a circuit by owner username and circuit name',
    auth: 'optional',
    tag,
    variables: ({ params }) => ({ username: params.username, name: params.circuit_name }),
    result: 'circuitByName',
  },
  {
    method: 'GET',
    path: '/circuits/:circuit_uid/primary',
    operation: 'GetCircuitPrimaryVersion',
    summary: 'The uid of the primary version (404 when the circuit has no version yet)',
    auth: 'optional',
    tag,
    params: circuitUid,
    variables: ({ params }) => ({ uid: params.circuit_uid }),
    result: 'circuitPrimaryVersion',
  },
  {
    method: 'GET',
    path: '/users/:username/circuits',
    operation: 'ListUserCircuits',
    summary: "A user's circuits, newest first; the owner's token adds their private ones",
    auth: 'optional',
    tag,
    query: page,
    variables: ({ params, query }) => ({ username: params.username, limit: query.limit, page: query.page }),
    result: 'userCircuits',
    shape: 'page',
  },
  {
    method: 'GET',
    path: '/circuits/:circuit_uid/circuit-versions',
    operation: 'ListCircuitVersions',
    summary: 'The versions of a circuit, newest first',
    auth: 'optional',
    tag,
    params: circuitUid,
    query: page,
    variables: ({ params, query }) => ({ circuitUid: params.circuit_uid, limit: query.limit, page: query.page }),
    result: 'circuitVersions',
    shape: 'page',
  },
  {
    method: 'POST',
    path: '/circuits/:circuit_uid/versions',
    operation: 'PublishCircuitVersion',
    summary:
      'Publish the next immutable version of a circuit (owner only); the first version, or one sent with primary: true, becomes primary',
    description:
      'The body is the definition (see GET /api/v1/definition-schema.json) plus an optional `primary`. An invalid definition is 400 with the reason.',
    auth: 'required',
    tag,
    params: circuitUid,
    body: {
      properties: {
        query_schema: {
          type: 'object',
          additionalProperties: true,
          description: "JSON Schema (draft 2020-12) of a run's input; its type must be object",
        },
        output_schema: {
          type: 'object',
          additionalProperties: true,
          description:
            "JSON Schema (draft 2020-12) of the run's output: a run whose output fails it ends EXCEPTION OutputContractViolation",
        },
        steps: {
          type: 'array',
          items: { type: 'object' },
          description: 'The steps, 1 to 100; each has an id and a kind, which decides its other fields',
        },
        output: {
          type: 'string',
          description: "JSONata over {input, steps}: the run's output (default: the last step's)",
        },
        description: { type: 'string', description: 'Free text about this version' },
        concurrency: {
          type: 'object',
          additionalProperties: true,
          description:
            '{"limit": 1–10000, "key"?: "{{input.<field>}}…"}: at most limit runs of the circuit RUNNING per rendered key (per circuit without one); the rest wait PROVISIONED',
        },
        debounce: {
          type: 'object',
          additionalProperties: true,
          description:
            '{"key": "{{input.<field>}}…", "window_s": 1–3600}: one caller\'s queries with the same rendered key within the window collapse into one run, started at its end with the latest input',
        },
        primary: {
          type: 'boolean',
          description: 'Make it the primary version (default false; the first version always is)',
        },
      },
      required: ['query_schema', 'steps'],
    },
    variables: ({ params, body }) => {
      const { primary, ...definition } = body;
      return { circuitUid: params.circuit_uid, definition, primary };
    },
    result: 'publishCircuitVersion',
  },
  {
    method: 'PUT',
    path: '/circuits/:circuit_uid/primary',
    operation: 'SetPrimaryCircuitVersion',
    summary:
      'Make a version of the circuit the primary one, run when a query names none (owner only); answers the circuit',
    auth: 'required',
    tag,
    params: circuitUid,
    body: {
      properties: { version_uid: { ...BODY_UID, description: 'A version of this circuit (404 otherwise)' } },
      required: ['version_uid'],
    },
    variables: ({ params, body }) => ({ circuitUid: params.circuit_uid, versionUid: body.version_uid }),
    result: 'setPrimaryCircuitVersion',
  },
  {
    method: 'PUT',
    path: '/users/:username/circuits/:circuit_name',
    operation: 'UpdateCircuit',
    summary: "Change a circuit's description, flags or license (owner only); only the fields sent change",
    auth: 'required',
    tag,
    body: {
      properties: {
        description: { type: 'string' },
        is_private: { type: 'boolean' },
        is_protected: { type: 'boolean' },
        license_type: { type: 'string' },
      },
    },
    variables: ({ params, body }) => ({
      username: params.username,
      name: params.circuit_name,
      input: {
        description: body.description,
        isPrivate: body.is_private,
        isProtected: body.is_protected,
        licenseType: body.license_type,
      },
    }),
    result: 'updateCircuit',
  },
  {
    method: 'PUT',
    path: '/circuits/:circuit_uid/deprecate',
    operation: 'DeprecateCircuit',
    summary: 'Deprecate a circuit and all its versions (owner only); they still run',
    auth: 'required',
    tag,
    params: circuitUid,
    body: { properties: {} },
    variables: ({ params }) => ({ uid: params.circuit_uid }),
    result: 'deprecateCircuit',
  },
  {
    method: 'POST',
    path: '/users/:username/circuits/:circuit_name/stars',
    operation: 'StarCircuit',
    summary: 'Star a circuit (idempotent); payload {starred, star_count}',
    auth: 'required',
    tag,
    body: { properties: {} },
    variables: ({ params }) => ({ username: params.username, name: params.circuit_name }),
    result: 'starCircuit',
  },
  {
    method: 'DELETE',
    path: '/users/:username/circuits/:circuit_name/stars',
    operation: 'UnstarCircuit',
    summary: 'Unstar a circuit (idempotent); payload {starred, star_count}',
    auth: 'required',
    tag,
    body: { properties: {} },
    variables: ({ params }) => ({ username: params.username, name: params.circuit_name }),
    result: 'unstarCircuit',
  },
  {
    method: 'GET',
    path: '/users/:username/circuits/:circuit_name/stars',
    operation: 'GetCircuitStarred',
    summary: 'Whether the caller has starred the circuit (boolean)',
    auth: 'required',
    tag,
    variables: ({ params }) => ({ username: params.username, name: params.circuit_name }),
    result: 'circuitStarred',
  },
  {
    method: 'GET',
    path: '/users/stars',
    operation: 'ListStarredCircuits',
    summary: "The caller's starred circuits, most recently starred first; pages of at most 50 (default 50)",
    auth: 'required',
    tag,
    query: pageQuery(50, 50),
    variables: ({ query }) => ({ limit: query.limit, page: query.page }),
    result: 'starredCircuits',
    shape: 'page',
  },
  {
    method: 'GET',
    path: '/users/:username/circuits/:circuit_name/ping',
    operation: 'PingCircuit',
    summary: 'Whether the caller can read the circuit (boolean; false when it does not exist)',
    auth: 'none',
    tag,
    variables: ({ params }) => ({ username: params.username, name: params.circuit_name }),
    result: 'circuitPing',
  },
  {
    method: 'GET',
    path: '/users/:username/circuits/:circuit_name/embeds',
    operation: 'ListCircuitEmbeds',
    summary: 'The circuits that embed this one, newest first; at most 200 in all',
    auth: 'optional',
    tag,
    query: page,
    variables: ({ params, query }) => ({
      username: params.username,
      name: params.circuit_name,
      limit: query.limit,
      page: query.page,
    }),
    result: 'circuitEmbeds',
    shape: 'page',
  },
  {
    method: 'GET',
    path: '/users/:username/circuits/:circuit_name/explain',
    operation: 'ExplainCircuit',
    summary: "A plain-words breakdown of the circuit's primary version",
    auth: 'optional',
    tag,
    variables: ({ params }) => ({ username: params.username, name: params.circuit_name }),
    result: 'explainCircuit',
  },
];
