import { UniqueConstraintError } from 'sequelize';
import { conflict } from '../errors';

export interface BoardFields {
  name?: string | null;
  description?: string | null;
  isPrivate?: boolean | null;
  isProtected?: boolean | null;
}

/** Runs a board write whose name must be unique per owner; a taken name is a Conflict. */
export async function withUniqueBoardName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof UniqueConstraintError) throw conflict(`You already have a board named ${name}`);
    throw error;
  }
}
