import { ApiToken } from '../../models';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { apiTokenViews } from '../../views/api-token.view';
import { findUser, restApiToken } from '../present';

export interface TokenListOptions {
  username: string;
  all?: boolean;
}

/** A user's API tokens, newest first, as GET /users/tokens lists them; never the tokens themselves (only their hashes are stored). */
export async function tokenList(io: CliIo, options: TokenListOptions) {
  return withDatabase(io, async ({ sequelize }) => {
    const user = await findUser(options.username);
    const tokens = await ApiToken.findAll({
      where: { user_uid: user.uid, ...(options.all ? {} : { revoked_at: null }) },
      order: [
        ['created_at', 'DESC'],
        ['uid', 'ASC'],
      ],
    });
    const views = await apiTokenViews(sequelize, tokens);
    return tokens.map((token, i) => restApiToken(views[i], options.all ? token : undefined));
  });
}
