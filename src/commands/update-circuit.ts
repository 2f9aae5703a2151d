import { Circuit } from '../models';
import { badInput } from '../errors';

export interface UpdateCircuitInput {
  description?: string | null;
  isPrivate?: boolean | null;
  isProtected?: boolean | null;
  licenseType?: string | null;
}

/** Changes only the fields present in `input`; `licenseType: null` clears the license. */
export async function updateCircuit(circuit: Circuit, input: UpdateCircuitInput): Promise<Circuit> {
  const changes: Partial<Pick<Circuit, 'description' | 'is_private' | 'is_protected' | 'license_type'>> = {};
  if (input.description !== undefined) {
    if (input.description === null) throw badInput('description must be a string', { field: 'description' });
    changes.description = input.description;
  }
  if (input.isPrivate !== undefined) {
    if (input.isPrivate === null) throw badInput('is_private must be a boolean', { field: 'is_private' });
    changes.is_private = input.isPrivate;
  }
  if (input.isProtected !== undefined) {
    if (input.isProtected === null) throw badInput('is_protected must be a boolean', { field: 'is_protected' });
    changes.is_protected = input.isProtected;
  }
  if (input.licenseType !== undefined) changes.license_type = input.licenseType;
  if (Object.keys(changes).length === 0) return circuit;
  return circuit.update(changes);
}
