import { setPrimaryVersion } from '../../commands/set-primary-version';
import { withDatabase } from '../database';
import { findCircuit, findUser, restCircuit } from '../present';

export interface VersionSetPrimaryOptions {
  username: string;
  circuit: string;
  version: string;
}

/** Makes a version of the user's circuit the primary one (PUT /circuits/{uid}/primary); prints the circuit. */
export async function versionSetPrimary(options: VersionSetPrimaryOptions) {
  return withDatabase(async () => {
    const owner = await findUser(options.username);
    const circuit = await findCircuit(owner, options.circuit);
    await setPrimaryVersion(circuit, options.version);
    return restCircuit(circuit, owner);
  });
}
