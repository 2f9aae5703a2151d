import type { Circuit, CircuitVersion } from '../models';

/**
 * The API view of a circuit and of a version, with no transport in it: the GraphQL types are built
 * from these, REST's snake_case fields are these fields renamed (schema/operations alias them), and
 * the CLI prints them the same way.
 */
export function circuitView(circuit: Circuit, username: string, adaptorUid: string) {
  return {
    uid: circuit.uid,
    name: circuit.name,
    description: circuit.description,
    username,
    isPrivate: circuit.is_private,
    isProtected: circuit.is_protected,
    licenseType: circuit.license_type ?? null,
    userCircuitMetricUid: circuit.user_circuit_metric_uid ?? null,
    isDeprecated: circuit.is_deprecated,
    starCount: circuit.star_count,
    adaptorUid,
    primaryVersionUid: circuit.primary_version_uid ?? null,
    createdAt: circuit.created_at,
    updatedAt: circuit.updated_at,
  };
}

export function versionView(version: CircuitVersion, primaryVersionUid: string | null) {
  return {
    uid: version.uid,
    circuitUid: version.circuit_uid,
    number: version.number,
    definition: version.definition as unknown,
    querySchema: version.definition.query_schema as unknown,
    isPrimary: version.uid === primaryVersionUid,
    isDeprecated: version.is_deprecated,
    createdAt: version.created_at,
  };
}
