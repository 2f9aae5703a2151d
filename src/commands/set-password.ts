import { User } from '../models';
import { badInput } from '../errors';
import { hashPassword } from '../auth/passwords';

/** The longest password sign-in accepts. */
export const MAX_PASSWORD_LENGTH = 1024;

/**
 * Sets the password of the /settings sign-in and ends the user's signed-in web sessions, so a
 * password changed because it leaked also locks out whoever used it.
 */
export async function setPassword(user: User, password: string): Promise<void> {
  if (password.length < 8) throw badInput('password must be at least 8 characters', { field: 'password' });
  if (password.length > MAX_PASSWORD_LENGTH)
    throw badInput(`password must be at most ${MAX_PASSWORD_LENGTH} characters`, { field: 'password' });
  const hash = await hashPassword(password);
  await User.sequelize!.transaction(async (transaction) => {
    await user.update({ password_hash: hash }, { transaction });
    await User.sequelize!.query(`DELETE FROM web_sessions WHERE sess->>'userUid' = $1`, {
      bind: [user.uid],
      transaction,
    });
  });
}
