import { Sequelize } from 'sequelize';
import { Circuit, CircuitEmbed, CircuitVersion, User } from '../models';
import { assertNoEmbedCycle, validateDefinition } from '../engine/validate-definition';
import type { JsonSchemaService } from '../engine/json-schemas';
import type { Sandbox } from '../sandbox/sandbox';

/** Advisory lock key serialising publishes that add embeds: the embed graph is checked and extended under it. */
const EMBEDS_LOCK = 0x636972_656d62; // 'cir' 'emb'

/**
 * Publishes the next version of a circuit: validated, numbered, immutable. The first version
 * becomes primary, as does any published with `primary`.
 */
export async function publishVersion(
  {
    sequelize,
    schemas,
    sandbox,
  }: { sequelize: Sequelize; schemas: Pick<JsonSchemaService, 'compiler'>; sandbox: Sandbox },
  publisher: User,
  circuit: Circuit,
  rawDefinition: unknown,
  makePrimary = false,
): Promise<CircuitVersion> {
  const { definition, embeddedCircuitUids } = await validateDefinition(
    { compiler: schemas.compiler, sandbox },
    rawDefinition,
    publisher,
    circuit,
  );
  return sequelize.transaction(async (transaction) => {
    // The cycle check during validation saw a snapshot. Publishes that add embeds take this lock first
    // (before any row lock, so they cannot deadlock on the circuits their embeds reference) and check
    // again under it: X→Y and Y→X published at once cannot both pass.
    if (embeddedCircuitUids.length > 0)
      await sequelize.query('SELECT pg_advisory_xact_lock($1)', { bind: [EMBEDS_LOCK], transaction });
    // Lock the circuit so concurrent publishes number their versions one after the other.
    const locked = await Circuit.findByPk(circuit.uid, { transaction, lock: transaction.LOCK.UPDATE });
    if (!locked) throw new Error('circuit vanished while publishing');
    const last: number | null = await CircuitVersion.max('number', {
      where: { circuit_uid: circuit.uid },
      transaction,
    });
    const version = await CircuitVersion.create(
      { circuit_uid: circuit.uid, number: (last ?? 0) + 1, definition, is_deprecated: locked.is_deprecated },
      { transaction },
    );
    if (embeddedCircuitUids.length > 0) {
      await assertNoEmbedCycle(circuit.uid, embeddedCircuitUids, transaction);
      await CircuitEmbed.bulkCreate(
        embeddedCircuitUids.map((embedded) => ({
          version_uid: version.uid,
          circuit_uid: circuit.uid,
          embedded_circuit_uid: embedded,
        })),
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
