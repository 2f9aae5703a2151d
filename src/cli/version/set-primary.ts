import type { Command } from 'commander';
import { setPrimaryVersion } from '../../commands/set-primary-version';
import { withDatabase } from '../database';
import { findCircuit, findUser, restCircuit } from '../present';
import { printJson } from '../output';

export interface VersionSetPrimaryOptions { username: string; circuit: string; version: string }

/** Makes a version of the user's circuit the primary one (PUT /circuits/{uid}/primary); prints the circuit. */
export async function versionSetPrimary(options: VersionSetPrimaryOptions) {
  return withDatabase(async () => {
    const owner = await findUser(options.username);
    const circuit = await findCircuit(owner, options.circuit);
    await setPrimaryVersion(circuit, options.version);
    return restCircuit(circuit, owner);
  });
}

export function register(parent: Command): void {
  parent
    .command('set-primary')
    .description('make a version the primary one (run when a query names no version or alias)')
    .requiredOption('--username <username>', 'the circuit owner')
    .requiredOption('--circuit <name>', 'circuit name')
    .requiredOption('--version <uid>', 'a version of that circuit')
    .action(async (options: VersionSetPrimaryOptions) => printJson(await versionSetPrimary(options)));
}
