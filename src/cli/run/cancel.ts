import { CircuitRun } from '../../models/CircuitRun';
import { User } from '../../models';
import { notFound } from '../../errors';
import { isUid } from '../../ids';
import { createLogger } from '../../logger';
import { createJsonSchemaService } from '../../engine/json-schemas';
import { Sandbox } from '../../sandbox/sandbox';
import { startRuntime } from '../../runtime';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { restRun } from '../present';

export interface RunCancelOptions {
  uid: string;
}

/**
 * Cancels a run through the service's own cancel (src/runs/cancel.ts): a PROVISIONED run ends here,
 * a RUNNING one is told over the run-event bus and its worker ends it, each EXCEPTION Canceled with
 * its webhooks, events and ledger rows. A run that has ended is printed as it is.
 */
export async function runCancel(io: CliIo, options: RunCancelOptions) {
  return withDatabase(io, async ({ config, sequelize, databaseUrl }) => {
    const run = isUid(options.uid) ? await CircuitRun.findByPk(options.uid) : null;
    if (!run) throw notFound(`Circuit run ${options.uid}`);
    const log = createLogger('silent');
    // The run wing and its subscribers (a canceled run's webhook message leaves at once); this process
    // executes nothing, so no blob storage is built (it would write a secret file into DATA_DIR).
    const schemas = createJsonSchemaService();
    const sandbox = new Sandbox();
    const runtime = await startRuntime({ config, sequelize, log, databaseUrl, worker: null, schemas, sandbox });
    try {
      await runtime.runs.cancel(run.uid);
    } finally {
      await runtime.close();
      await Promise.all([schemas.close(), sandbox.close()]);
    }
    const ended = (await CircuitRun.findByPk(run.uid))!;
    const owner = await User.findByPk(ended.user_uid, { attributes: ['username'] });
    return restRun(ended, owner?.username ?? '');
  });
}
