import type { Command } from 'commander';
import { createCircuit } from '../../commands/create-circuit';
import { withDatabase } from '../database';
import { findUser, restCircuit } from '../present';
import { printJson } from '../output';

export interface CircuitCreateOptions { username: string; name: string; description?: string; private?: boolean; protected?: boolean }

/** Creates a circuit (and its default query adaptor) owned by the user. */
export async function circuitCreate(options: CircuitCreateOptions) {
  return withDatabase(async ({ sequelize }) => {
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

export function register(parent: Command): void {
  parent
    .command('create')
    .description('create a circuit owned by a user')
    .requiredOption('--username <username>', 'the owner')
    .requiredOption('--name <name>', 'circuit name, unique per owner')
    .option('--description <text>', 'short description')
    .option('--private', 'only the owner sees and runs it')
    .option('--protected', 'the circuit object, versions and explain need the owner token')
    .action(async (options: CircuitCreateOptions) => printJson(await circuitCreate(options)));
}
