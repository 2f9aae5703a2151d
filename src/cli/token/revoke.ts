import { revokeApiToken } from '../../commands/revoke-api-token';
import { notFound } from '../../errors';
import { isUid } from '../../ids';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findUser } from '../present';

export interface TokenRevokeOptions {
  username: string;
  uid: string;
}

/** Revokes one of a user's tokens by uid (from `token list`); requests with it get 401 at once. */
export async function tokenRevoke(io: CliIo, options: TokenRevokeOptions) {
  return withDatabase(io, async () => {
    const user = await findUser(options.username);
    const revoked = isUid(options.uid) && (await revokeApiToken(user, options.uid));
    if (!revoked) throw notFound(`Active token ${options.uid} of ${user.username}`);
    return { uid: options.uid, revoked: true };
  });
}
