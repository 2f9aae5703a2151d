import { Op, Sequelize, type Transaction } from 'sequelize';
import { Circuit, CircuitAlias, CircuitAliasHistory, CircuitVersion, type AliasRoute } from '../models';
import { badInput } from '../errors';
import { isUid } from '../ids';
import { checkAliasName, checkRouteShape, sameRoutes } from '../aliases/alias-routes';

export interface SetCircuitAliasResult {
  alias: CircuitAlias;
  /** False when the alias already had exactly these routes (nothing was written). */
  changed: boolean;
}

/**
 * PUT /circuits/{uid}/aliases/{name} (docs/releases.md, Aliases): creates the alias or gives it a new route set,
 * keeping the set it replaces in its history, in one transaction under the circuit's row lock (so
 * two PUTs to one alias are ordered and neither set is lost from the history). The same routes again
 * change nothing. Every route must name a version of this circuit (400 naming the route otherwise).
 * A rollback is this command with a set from the history.
 */
export async function setCircuitAlias(
  sequelize: Sequelize,
  circuit: Circuit,
  name: string,
  rawRoutes: readonly { version_uid: unknown; weight: unknown }[],
): Promise<SetCircuitAliasResult> {
  checkAliasName(name);
  const routes = checkRouteShape(rawRoutes);
  return sequelize.transaction(async (transaction) => {
    await Circuit.findByPk(circuit.uid, { transaction, lock: transaction.LOCK.NO_KEY_UPDATE, attributes: ['uid'] });
    await checkVersionsOf(circuit, routes, transaction);
    const current = await CircuitAlias.findOne({ where: { circuit_uid: circuit.uid, name }, transaction });
    if (!current) {
      const alias = await CircuitAlias.create({ circuit_uid: circuit.uid, name, routes }, { transaction });
      return { alias, changed: true };
    }
    if (sameRoutes(current.routes, routes)) return { alias: current, changed: false };
    const replaced = { routes: current.routes, setAt: current.updated_at };
    current.routes = routes;
    current.changed('routes', true);
    await current.save({ transaction });
    // The old set's replaced_at is the new set's updated_at.
    await CircuitAliasHistory.create(
      {
        circuit_uid: circuit.uid,
        name,
        routes: replaced.routes,
        set_at: replaced.setAt,
        replaced_at: current.updated_at,
      },
      { transaction },
    );
    return { alias: current, changed: true };
  });
}

async function checkVersionsOf(circuit: Circuit, routes: AliasRoute[], transaction: Transaction): Promise<void> {
  const uids = routes.map((route) => route.version_uid).filter(isUid);
  const found = new Set(
    (
      await CircuitVersion.findAll({
        where: { uid: { [Op.in]: uids }, circuit_uid: circuit.uid },
        attributes: ['uid'],
        transaction,
      })
    ).map((v) => v.uid),
  );
  routes.forEach((route, i) => {
    if (!found.has(route.version_uid)) {
      throw badInput(`routes[${i}].version_uid is not a version of this circuit`, {
        field: `routes[${i}].version_uid`,
      });
    }
  });
}
