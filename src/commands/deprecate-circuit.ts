import type { Sequelize } from 'sequelize';
import { Circuit, CircuitVersion } from '../models';

/**
 * Marks a circuit and every version of it deprecated, in one transaction. Idempotent; versions
 * published later are deprecated too (publishVersion copies the circuit's flag).
 */
export async function deprecateCircuit(sequelize: Sequelize, circuit: Circuit): Promise<Circuit> {
  await sequelize.transaction(async (transaction) => {
    // The first deprecation is the one clients see (Deprecation header); repeating it changes nothing.
    await Circuit.update(
      { is_deprecated: true, deprecated_at: sequelize.literal('COALESCE(deprecated_at, now())') },
      { where: { uid: circuit.uid }, transaction },
    );
    await CircuitVersion.update(
      { is_deprecated: true },
      { where: { circuit_uid: circuit.uid, is_deprecated: false }, transaction },
    );
  });
  return circuit.reload();
}
