import { ApiToken, Circuit } from '../../models';
import { Blob } from '../../models/blobs';
import { CircuitRun } from '../../models/CircuitRun';
import { RUN_STATES } from '../../domain/runs';
import { countSchedulesOf } from '../../schedules/schedule-store';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findUser, restUser } from '../present';

export interface UserShowOptions {
  username: string;
}

/** A user's profile and balance, and how much they have: circuits, runs by state, schedules, active tokens, blobs. */
export async function userShow(io: CliIo, options: UserShowOptions) {
  return withDatabase(io, async ({ sequelize }) => {
    const user = await findUser(options.username);
    const [circuits, runsByState, schedules, tokens, blobs] = await Promise.all([
      Circuit.count({ where: { owner_uid: user.uid } }),
      CircuitRun.count({ where: { user_uid: user.uid }, group: ['state'] }),
      countSchedulesOf(sequelize, user.uid),
      ApiToken.count({ where: { user_uid: user.uid, revoked_at: null } }),
      Blob.count({ where: { user_uid: user.uid } }),
    ]);
    const runs = Object.fromEntries(
      RUN_STATES.map((state) => [state, Number(runsByState.find((row) => row.state === state)?.count ?? 0)]),
    );
    return { ...restUser(user), counts: { circuits, runs, schedules, active_tokens: tokens, blobs } };
  });
}
