import { Sequelize, UniqueConstraintError } from 'sequelize';
import { Circuit, CircuitAdaptor, CircuitMetric, User } from '../models';
import { badInput, conflict } from '../errors';
import { checkResourceName } from './names';
import { isUid } from '../ids';
import { metricPermits } from '../policies/metric.policy';

export interface CreateCircuitInput {
  name: string;
  description?: string | null;
  isPrivate?: boolean | null;
  isProtected?: boolean | null;
  licenseType?: string | null;
  userCircuitMetricUid?: string | null;
}

/** Creates a circuit and its default query adaptor in one transaction. */
export async function createCircuit(sequelize: Sequelize, owner: User, input: CreateCircuitInput): Promise<Circuit> {
  checkResourceName(input.name);
  if (input.userCircuitMetricUid) {
    const metric = isUid(input.userCircuitMetricUid) ? await CircuitMetric.findByPk(input.userCircuitMetricUid) : null;
    // Someone else's configuration is answered like a missing one: its uid reveals nothing.
    if (!metric || !metricPermits(owner, metric, 'attach')) {
      throw badInput('user_circuit_metric_uid does not name a metric configuration of yours', {
        field: 'user_circuit_metric_uid',
      });
    }
  }
  try {
    return await sequelize.transaction(async (transaction) => {
      const circuit = await Circuit.create(
        {
          owner_uid: owner.uid,
          name: input.name,
          description: input.description ?? '',
          is_private: input.isPrivate ?? false,
          is_protected: input.isProtected ?? false,
          license_type: input.licenseType ?? null,
          user_circuit_metric_uid: input.userCircuitMetricUid ?? null,
        },
        { transaction },
      );
      await CircuitAdaptor.create({ circuit_uid: circuit.uid, kind: 'query' }, { transaction });
      return circuit;
    });
  } catch (error) {
    if (error instanceof UniqueConstraintError) throw conflict(`You already have a circuit named ${input.name}`);
    throw error;
  }
}
