import { UniqueConstraintError } from 'sequelize';
import { User } from '../models';
import { badInput, conflict } from '../errors';
import { hashPassword } from '../auth/passwords';

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
    throw badInput('username must be 2-39 characters of lowercase letters, digits, "_" or "-", starting with a letter or digit', { field: 'username' });
  }
  if (input.password !== undefined && input.password.length < 8) throw badInput('password must be at least 8 characters', { field: 'password' });
  if (input.credits !== undefined && (!Number.isInteger(input.credits) || input.credits < 0)) {
    throw badInput('credits must be a whole number of at least 0', { field: 'credits' });
  }
  try {
    return await User.create({
      username: input.username,
      name: input.name ?? '',
      bio: input.bio ?? '',
      is_admin: input.isAdmin ?? false,
      is_private: input.isPrivate ?? false,
      credits: input.credits ?? 0,
      password_hash: input.password ? await hashPassword(input.password) : null,
    });
  } catch (error) {
    if (error instanceof UniqueConstraintError) throw conflict(`The username ${input.username} is taken`);
    throw error;
  }
}
