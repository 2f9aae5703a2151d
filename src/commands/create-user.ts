import { UniqueConstraintError } from 'sequelize';
import { User } from '../models';
import { badInput, conflict } from '../errors';
import { hashPassword } from '../auth/passwords';
import { grantCredits, MAX_BALANCE } from '../credits/grants';

export const USERNAME = /^[a-z0-9][a-z0-9_-]{1,38}$/;

export interface CreateUserInput {
  username: string;
  password?: string;
  name?: string;
  bio?: string;
  isAdmin?: boolean;
  isPrivate?: boolean;
  credits?: number;
}

export async function createUser(input: CreateUserInput): Promise<User> {
  if (!USERNAME.test(input.username)) {
    throw badInput(
      'username must be 2-39 characters of lowercase letters, digits, "_" or "-", starting with a letter or digit',
      { field: 'username' },
    );
  }
  if (input.password !== undefined && input.password.length < 8)
    throw badInput('password must be at least 8 characters', { field: 'password' });
  const credits = input.credits ?? 0;
  if (!Number.isSafeInteger(credits) || credits < 0 || credits > MAX_BALANCE) {
    throw badInput(`credits must be a whole number from 0 to ${MAX_BALANCE}`, { field: 'credits' });
  }
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  try {
    // A starting balance is a grant like any other: it is in the ledger.
    return await User.sequelize!.transaction(async (transaction) => {
      const user = await User.create(
        {
          username: input.username,
          name: input.name ?? '',
          bio: input.bio ?? '',
          is_admin: input.isAdmin ?? false,
          is_private: input.isPrivate ?? false,
          password_hash: passwordHash,
        },
        { transaction },
      );
      if (credits > 0) {
        await grantCredits(User.sequelize!, { uid: user.uid }, credits, transaction);
        await user.reload({ transaction });
      }
      return user;
    });
  } catch (error) {
    if (error instanceof UniqueConstraintError) throw conflict(`The username ${input.username} is taken`);
    throw error;
  }
}
