import { Circuit, CircuitAdaptor, CircuitVersion, User, type CircuitAlias } from '../models';
import type { Blob } from '../models/blobs';
import { notFound } from '../errors';
import { presentRunPayload } from '../runs/present';
import type { CircuitRun } from '../models/CircuitRun';
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

/** The alias as REST returns it (fragment RestCircuitAlias). */
export function restAlias(alias: CircuitAlias) {
  return { name: alias.name, circuit_uid: alias.circuit_uid, routes: alias.routes, updated_at: alias.updated_at };
}

/**
 * The blob as REST returns it (fragment RestBlob), with `blob_type` and `path` as an admin token
 * sees them: the operator at the CLI already has the storage in hand.
 */
export function restBlob(blob: Blob) {
  const { filename: _filename, ...view } = blobView(blob, null);
  return { ...snakeKeys(view), blob_type: blob.blob_type, path: storagePath(blob.blob_type, blob.bucket, blob.uid) };
}

/**
 * The run as its owner sees it over REST, plus what only the operator sees: why it failed in the
 * worker's words, what it cost and held, and how often it was claimed.
 */
export function restRun(run: CircuitRun, username: string) {
  return {
    ...presentRunPayload(run, { mayDebug: true }),
    username,
    started_at: run.started_at ?? null,
    attempt: run.attempt,
    credits_cost: run.credits_cost === null || run.credits_cost === undefined ? null : Number(run.credits_cost),
    credits_held: Number(run.get('credits_held') ?? 0),
    failure_reason: run.failure_reason ?? null,
  };
}
