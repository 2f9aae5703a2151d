import { User } from '../../models';
import { CircuitRun } from '../../models/CircuitRun';
import { notFound } from '../../errors';
import { isUid } from '../../ids';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { restRun } from '../present';

export interface RunShowOptions {
  uid: string;
}

/** One run with the operator's details (failure reason, cost, attempts). */
export async function runShow(io: CliIo, options: RunShowOptions) {
  return withDatabase(io, async () => {
    const run = isUid(options.uid) ? await CircuitRun.findByPk(options.uid) : null;
    if (!run) throw notFound(`Circuit run ${options.uid}`);
    const user = await User.findByPk(run.user_uid, { attributes: ['username'] });
    return restRun(run, user?.username ?? '');
  });
}
