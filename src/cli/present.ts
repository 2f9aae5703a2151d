import { Circuit, CircuitAdaptor, CircuitVersion, User } from '../models';
import type { Blob } from '../models/blobs';
import { notFound } from '../errors';
import { storagePath } from '../storage';
import { circuitView, versionView } from '../views/circuit.view';
import { blobView } from '../views/blob.view';
import { snakeKeys } from '../views/snake-keys';

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

/** The circuit as REST returns it (fragment RestCircuit). */
export async function restCircuit(circuit: Circuit, owner: User) {
  const adaptor = await CircuitAdaptor.findOne({ where: { circuit_uid: circuit.uid, kind: 'query' }, order: [['created_at', 'ASC']] });
  return snakeKeys(circuitView(circuit, owner.username, adaptor?.uid ?? ''));
}

/** The version as REST returns it (fragment RestCircuitVersion). */
export function restVersion(version: CircuitVersion, primaryVersionUid: string | null) {
  const { querySchema: _querySchema, ...view } = versionView(version, primaryVersionUid);
  return snakeKeys(view);
}

/**
 * The blob as REST returns it (fragment RestBlob), with `blob_type` and `path` as an admin token
 * sees them: the operator at the CLI already has the storage in hand.
 */
export function restBlob(blob: Blob) {
  const { filename: _filename, ...view } = blobView(blob, null);
  return { ...snakeKeys(view), blob_type: blob.blob_type, path: storagePath(blob.blob_type, blob.bucket, blob.uid) };
}
