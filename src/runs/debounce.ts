import type { Transaction } from 'sequelize';
import { CircuitRun, type RunDraft } from '../models/CircuitRun';
import { preparedQuery } from '../db/prepared';
import type { AdmittedRun } from './admission';
import type { RunDeps } from './ports';

/** A debounced query's outcome: the run it made, or the run of its key's open window it joined (`joined`). */
export interface Debounced {
  admitted: AdmittedRun | null;
  joined: boolean;
}

/**
 * A query of a debounced version (docs/runs.md, Debounce), in `transaction`: with the caller's key locked
 * (an advisory lock on caller, version and key, so two first queries make one run), the run of the key's open
 * window takes this query's input; without one, a run is admitted parked until the window's end (`window_s`
 * from now), as a delayed start is, with its base credit held. `fields.debounce_key` is the rendered key.
 */
export async function admitDebounced(
  deps: Pick<RunDeps, 'sequelize' | 'runService'>,
  fields: RunDraft,
  windowSeconds: number,
  transaction: Transaction,
): Promise<Debounced> {
  const { sequelize } = deps;
  await preparedQuery(
    sequelize,
    'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))',
    [`debounce:${fields.user_uid}:${fields.circuit_version_uid}:${fields.debounce_key}`],
    transaction,
  );
  const [open] = await preparedQuery<Record<string, unknown>>(
    sequelize,
    `UPDATE circuit_runs SET input = $4::jsonb, updated_at = now()
      WHERE user_uid = $1 AND circuit_version_uid = $2 AND debounce_key = $3
        AND state = 'PROVISIONED' AND parked_at IS NOT NULL AND wake_at > now() AND cancel_requested_at IS NULL
      RETURNING *`,
    [fields.user_uid, fields.circuit_version_uid, fields.debounce_key, JSON.stringify(fields.input)],
    transaction,
  );
  if (open)
    return {
      admitted: { run: CircuitRun.build(open as never, { isNewRecord: false, raw: true }), queued: false },
      joined: true,
    };
  const admitted = await deps.runService.admission.admit(
    { ...fields, wake_at: new Date(Date.now() + windowSeconds * 1000) },
    transaction,
  );
  return { admitted, joined: false };
}
