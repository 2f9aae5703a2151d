/**
 * A typed client of the Circuit Service REST API (docs/typed-clients.md): openapi-fetch typed with the types
 * openapi-typescript generated from GET /api/v1/openapi.json (schema.d.ts; `npm run client:generate`).
 *
 *   const api = createClient({ baseUrl: 'https://circuits.example/api/v1', token: 'cst_…' });
 *   const { data } = await api.POST('/circuit-adaptors/{adaptor_uid}/query', { params: { path: { adaptor_uid } }, body: { input: { q: 'hi' } } });
 */
import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './schema';

export type { paths, components, operations } from './schema';

export interface CircuitClientOptions extends ClientOptions {
  /** An API token (`cst_…`), sent as `Authorization: Bearer …`. */
  token?: string;
}

export type CircuitClient = Client<paths>;

export function createClient(options: CircuitClientOptions = {}): CircuitClient {
  const { token, headers, ...rest } = options;
  return createFetchClient<paths>({
    ...rest,
    headers: {
      ...(headers as Record<string, string> | undefined),
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
  });
}
