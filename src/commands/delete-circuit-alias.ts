import type { Sequelize } from 'sequelize';
import { CircuitAlias, type Circuit } from '../models';
import { notFound } from '../errors';

/** DELETE /circuits/{uid}/aliases/{name}: removes the alias and its history; answers the alias as it was. Runs drawn from it keep its name. */
export async function deleteCircuitAlias(sequelize: Sequelize, circuit: Circuit, name: string): Promise<CircuitAlias> {
  return sequelize.transaction(async (transaction) => {
    const alias = await CircuitAlias.findOne({
      where: { circuit_uid: circuit.uid, name },
      transaction,
      lock: transaction.LOCK.UPDATE,
    });
    if (!alias) throw notFound('Alias');
    await alias.destroy({ transaction });
    return alias;
  });
}
