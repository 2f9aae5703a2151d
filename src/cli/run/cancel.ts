import { CircuitRun } from '../../models/CircuitRun';
import { User } from '../../models';
import { notFound } from '../../errors';
import { isUid } from '../../ids';
import { createLogger } from '../../logger';
import { cancelRun } from '../../runs/cancel';
import { startRunRuntime } from '../../runs/runtime';
import type { Services } from '../../services';
import { withDatabase } from '../database';
import { restRun } from '../present';

export interface RunCancelOptions { uid: string }

/**
 * Cancels a run through the service's own cancel (src/runs/cancel.ts): a PROVISIONED run ends here,
 * a RUNNING one is told over the run-event bus and its worker ends it, each EXCEPTION Canceled with
 * its webhooks, events and ledger rows. A run that has ended is printed as it is.
 */
export async function runCancel(options: RunCancelOptions) {
  return withDatabase(async ({ config, sequelize, databaseUrl }) => {
    const run = isUid(options.uid) ? await CircuitRun.findByPk(options.uid) : null;
    if (!run) throw notFound(`Circuit run ${options.uid}`);
    const log = createLogger('silent');
    // The run wing only (queue for webhook jobs, event bus, run service): this process executes nothing.
    const runtime = await startRunRuntime({ config, sequelize, log, databaseUrl, worker: false });
    try {
      // Ending a run never touches blob storage, the search limiter or JSON Schemas; building them would write a secret file into DATA_DIR.
      const services = { config, sequelize, log, ...runtime.services } as Omit<Services, 'blobStorage' | 'searchRateLimiter' | 'schemas'> as Services;
      runtime.attach(services);
      await cancelRun(services, run.uid);
    } finally {
      await runtime.close();
    }
    const ended = (await CircuitRun.findByPk(run.uid))!;
    const owner = await User.findByPk(ended.user_uid, { attributes: ['username'] });
    return restRun(ended, owner?.username ?? '');
  });
}
