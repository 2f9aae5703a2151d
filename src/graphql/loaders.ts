import DataLoader from 'dataloader';
import { Op } from 'sequelize';
import { Circuit, CircuitAdaptor, CircuitAlias, CircuitVersion, User } from '../models';
import { preparedQuery } from '../db/prepared';
import type { RunWing, WaitingStep } from '../runs';

function byKey<T, K extends keyof T>(rows: T[], key: K, keys: readonly T[K][]): (T | null)[] {
  const map = new Map(rows.map((row) => [row[key], row]));
  return keys.map((k) => map.get(k) ?? null);
}

/** The model's columns only (not search_vector, say), as findAll would read them. */
let circuitSelect: string | undefined;

/** Per-request batch loaders: every relation a list may show is loaded through one of these. */
export function createLoaders(runs: Pick<RunWing, 'waitingSteps'>) {
  return {
    user: new DataLoader<string, User | null>(async (uids) =>
      byKey(await User.findAll({ where: { uid: { [Op.in]: [...uids] } } }), 'uid', uids),
    ),
    // A named statement: a run's circuit is loaded on every read of a run.
    circuit: new DataLoader<string, Circuit | null>(async (uids) => {
      circuitSelect ??= `SELECT ${Object.keys(Circuit.getAttributes())
        .map((a) => `"${a}"`)
        .join(', ')} FROM circuits WHERE uid = ANY($1::uuid[])`;
      const rows = await preparedQuery<object>(Circuit.sequelize!, circuitSelect, [[...uids]]);
      return byKey(
        rows.map((row) => Circuit.build(row as never, { isNewRecord: false, raw: true })),
        'uid',
        uids,
      );
    }),
    version: new DataLoader<string, CircuitVersion | null>(async (uids) =>
      byKey(await CircuitVersion.findAll({ where: { uid: { [Op.in]: [...uids] } } }), 'uid', uids),
    ),
    adaptorByCircuit: new DataLoader<string, CircuitAdaptor | null>(async (uids) =>
      byKey(
        await CircuitAdaptor.findAll({ where: { circuit_uid: { [Op.in]: [...uids] }, kind: 'query' } }),
        'circuit_uid',
        uids,
      ),
    ),
    adaptorsOfCircuit: new DataLoader<string, CircuitAdaptor[]>(async (uids) => {
      const rows = await CircuitAdaptor.findAll({
        where: { circuit_uid: { [Op.in]: [...uids] } },
        order: [['created_at', 'ASC']],
      });
      return uids.map((uid) => rows.filter((row) => row.circuit_uid === uid));
    }),
    /** A circuit's aliases (`Circuit.aliases`), by name. */
    aliasesOfCircuit: new DataLoader<string, CircuitAlias[]>(async (uids) => {
      const rows = await CircuitAlias.findAll({
        where: { circuit_uid: { [Op.in]: [...uids] } },
        order: [['name', 'ASC']],
      });
      return uids.map((uid) => rows.filter((row) => row.circuit_uid === uid));
    }),
    /** The approval steps a run waits on (`waitingFor`): one statement for the RUNNING runs of a list. */
    waitingSteps: new DataLoader<string, WaitingStep[]>(async (uids) => runs.waitingSteps(uids)),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
