import { setPrimaryVersion } from '../../commands/set-primary-version';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findCircuit, findUser, restCircuit } from '../present';

export interface VersionSetPrimaryOptions {
  username: string;
  circuit: string;
  version: string;
}

/** Makes a version of the user's circuit the primary one (PUT /circuits/{uid}/primary); prints the circuit. */
export async function versionSetPrimary(io: CliIo, options: VersionSetPrimaryOptions) {
  return withDatabase(io, async () => {
    const owner = await findUser(options.username);
    const circuit = await findCircuit(owner, options.circuit);
    await setPrimaryVersion(circuit, options.version);
    return restCircuit(circuit, owner);
  });
}
