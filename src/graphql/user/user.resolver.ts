import { Arg, Authorized, Ctx, Query, Resolver } from 'type-graphql';
import { User } from '../../models';
import { readBalance } from '../../credits/balance';
import { profileVisible } from '../../policies/user.policy';
import type { AppContext } from '../context';
import { UserProfile, Viewer } from './user.type';

@Resolver()
export class UserResolver {
  @Query(() => Viewer, { nullable: true, description: 'The caller, or null without a token' })
  async viewer(@Ctx() ctx: AppContext): Promise<Viewer | null> {
    return ctx.viewer ? Viewer.fromViewer(ctx.viewer, await readBalance(User.sequelize!, ctx.viewer.uid)) : null;
  }

  @Authorized()
  @Query(() => Viewer, { description: 'The caller, like viewer, but a token is required (GET /users/me)' })
  async me(@Ctx() ctx: AppContext): Promise<Viewer> {
    return Viewer.fromViewer(ctx.viewer!, await readBalance(User.sequelize!, ctx.viewer!.uid));
  }

  @Query(() => UserProfile, { nullable: true, description: 'A user by username (private profiles only to themselves)' })
  async user(@Arg('username', () => String) username: string, @Ctx() ctx: AppContext): Promise<UserProfile | null> {
    const user = await User.findOne({ where: { username } });
    if (!user || !profileVisible(ctx.viewer, user)) return null;
    return UserProfile.from(user);
  }
}
