import { createCircuit } from '../../commands/create-circuit';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findUser, restCircuit } from '../present';

export interface CircuitCreateOptions {
  username: string;
  name: string;
  description?: string;
  private?: boolean;
  protected?: boolean;
}

/** Creates a circuit (and its default query adaptor) owned by the user. */
export async function circuitCreate(io: CliIo, options: CircuitCreateOptions) {
  return withDatabase(io, async ({ sequelize }) => {
    const owner = await findUser(options.username);
    const circuit = await createCircuit(sequelize, owner, {
      name: options.name,
      description: options.description,
      isPrivate: options.private ?? false,
      isProtected: options.protected ?? false,
    });
    return restCircuit(circuit, owner);
  });
}
