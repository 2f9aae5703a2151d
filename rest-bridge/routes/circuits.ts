import type { Route } from '../route';

const tag = 'Circuits';

export const circuitRoutes: Route[] = [
  {
    method: 'POST',
    path: '/circuits',
    operation: 'CreateCircuit',
    summary: 'Create a circuit owned by the caller',
    auth: 'required',
    tag,
    body: {
      name: { type: 'string', required: true },
      description: { type: 'string' },
      is_private: { type: 'boolean' },
      is_protected: { type: 'boolean' },
      license_type: { type: 'string' },
      user_circuit_metric_uid: { type: 'string' },
    },
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
    variables: ({ params }) => ({ uid: params.circuit_uid }),
    result: 'circuit',
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
];
