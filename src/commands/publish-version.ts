import { Sequelize } from 'sequelize';
import { Circuit, CircuitEmbed, CircuitVersion, User } from '../models';
import { validateDefinition } from '../engine/validate-definition';

/**
 * Publishes the next version of a circuit: validated, numbered, immutable. The first version
 * becomes primary, as does any published with `primary`.
 */
export async function publishVersion(
  sequelize: Sequelize,
  publisher: User,
  circuit: Circuit,
  rawDefinition: unknown,
  makePrimary = false,
): Promise<CircuitVersion> {
  const { definition, embeddedCircuitUids } = await validateDefinition(rawDefinition, publisher, circuit);
  return sequelize.transaction(async (transaction) => {
    // Lock the circuit so concurrent publishes number their versions one after the other.
    const locked = await Circuit.findByPk(circuit.uid, { transaction, lock: transaction.LOCK.UPDATE });
    if (!locked) throw new Error('circuit vanished while publishing');
    const last: number | null = await CircuitVersion.max('number', { where: { circuit_uid: circuit.uid }, transaction });
    const version = await CircuitVersion.create(
      { circuit_uid: circuit.uid, number: (last ?? 0) + 1, definition, is_deprecated: locked.is_deprecated },
      { transaction },
    );
    if (embeddedCircuitUids.length > 0) {
      await CircuitEmbed.bulkCreate(
        embeddedCircuitUids.map((embedded) => ({ version_uid: version.uid, circuit_uid: circuit.uid, embedded_circuit_uid: embedded })),
        { transaction },
      );
    }
    if (makePrimary || !locked.primary_version_uid) {
      await locked.update({ primary_version_uid: version.uid }, { transaction });
      circuit.primary_version_uid = version.uid;
    }
    return version;
  });
}
