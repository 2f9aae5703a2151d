import { ApiToken, User } from '../models';

export async function revokeApiToken(user: User, tokenUid: string): Promise<boolean> {
  const [count] = await ApiToken.update(
    { revoked_at: new Date() },
    { where: { uid: tokenUid, user_uid: user.uid, revoked_at: null } },
  );
  return count > 0;
}
