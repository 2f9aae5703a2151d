import { Circuit, CircuitVersion } from '../models';
import { notFound } from '../errors';
import { isUid } from '../ids';

/** Makes a version of the circuit the one run when a query names none; a uid that is not a version of this circuit is 404. */
export async function setPrimaryVersion(circuit: Circuit, versionUid: string): Promise<Circuit> {
  const version = isUid(versionUid)
    ? await CircuitVersion.findByPk(versionUid, { attributes: ['uid', 'circuit_uid'] })
    : null;
  if (!version || version.circuit_uid !== circuit.uid) throw notFound('Circuit version');
  return circuit.update({ primary_version_uid: version.uid });
}
