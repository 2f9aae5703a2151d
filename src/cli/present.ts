import { Circuit, CircuitAdaptor, CircuitVersion, User } from '../models';
import { notFound } from '../errors';

/** JSON dates as the REST API prints them. */
function iso(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString();
}

export async function findUser(username: string): Promise<User> {
  const user = await User.findOne({ where: { username } });
  if (!user) throw notFound(`User ${username}`);
  return user;
}

export async function findCircuit(owner: User, name: string): Promise<Circuit> {
  const circuit = await Circuit.findOne({ where: { owner_uid: owner.uid, name } });
  if (!circuit) throw notFound(`Circuit ${owner.username}/${name}`);
  return circuit;
}

/** The circuit in the REST shape (schema/operations/circuits.graphql, fragment RestCircuit). */
export async function restCircuit(circuit: Circuit, owner: User) {
  const adaptor = await CircuitAdaptor.findOne({ where: { circuit_uid: circuit.uid, kind: 'query' }, order: [['created_at', 'ASC']] });
  return {
    uid: circuit.uid,
    name: circuit.name,
    description: circuit.description,
    username: owner.username,
    is_private: circuit.is_private,
    is_protected: circuit.is_protected,
    license_type: circuit.license_type ?? null,
    user_circuit_metric_uid: circuit.user_circuit_metric_uid ?? null,
    is_deprecated: circuit.is_deprecated,
    star_count: circuit.star_count,
    adaptor_uid: adaptor?.uid ?? null,
    primary_version_uid: circuit.primary_version_uid ?? null,
    created_at: iso(circuit.created_at),
    updated_at: iso(circuit.updated_at),
  };
}

/** The version in the REST shape (fragment RestCircuitVersion). */
export function restVersion(version: CircuitVersion, primaryVersionUid: string | null) {
  return {
    uid: version.uid,
    circuit_uid: version.circuit_uid,
    number: version.number,
    definition: version.definition,
    is_primary: version.uid === primaryVersionUid,
    is_deprecated: version.is_deprecated,
    created_at: iso(version.created_at),
  };
}

type Loose = Record<string, unknown>;

function pick(record: Loose, ...names: string[]): unknown {
  for (const name of names) if (record[name] !== undefined) return record[name];
  return undefined;
}

/**
 * The blob in the REST shape of spec §2.6, with `blob_type` and `path` (the CLI is the operator).
 * Reads the record loosely (snake_case or camelCase; a Sequelize model or a plain object) so the CLI
 * does not depend on the storage area's exact model.
 */
export function restBlob(blob: unknown) {
  const source = blob as { get?: (options: { plain: true }) => Loose } & Loose;
  const record: Loose = typeof source.get === 'function' ? source.get({ plain: true }) : source;
  const created = pick(record, 'created_at', 'createdAt') as Date | string | undefined;
  const uid = pick(record, 'uid');
  const blobType = (pick(record, 'blob_type', 'blobType') as string | undefined) ?? null;
  const bucket = pick(record, 'bucket') as string | undefined;
  // `<scheme>://<bucket>/<uid>` (spec 2.6; src/storage storagePath).
  const storagePath = pick(record, 'path') ?? (blobType && bucket ? `${blobType === 'gcs' ? 'gs' : blobType}://${bucket}/${String(uid)}` : null);
  return {
    uid,
    hash: pick(record, 'hash', 'sha256'),
    user_uid: pick(record, 'user_uid', 'userUid', 'owner_uid'),
    created_at: iso(created),
    can_delete: pick(record, 'can_delete', 'canDelete') ?? false,
    bytes: Number(pick(record, 'bytes', 'size') ?? 0),
    total_reads: Number(pick(record, 'total_reads', 'totalReads') ?? 0),
    mime_type: pick(record, 'mime_type', 'mimeType') ?? null,
    blob_type: blobType,
    path: storagePath,
  };
}
