import { InvalidArgumentError, type Command } from 'commander';
import { setCircuitAlias } from '../../commands/set-circuit-alias';
import { withDatabase } from '../database';
import { findCircuit, findUser, restAlias } from '../present';
import { printJson } from '../output';

export interface AliasSetOptions { username: string; circuit: string; name: string; route: { version_uid: string; weight: number }[] }

/** `--route VERSION_UID=WEIGHT`, repeatable: the weight must be a whole number (the command checks the rest). */
export function parseRoute(value: string, previous: AliasSetOptions['route'] = []): AliasSetOptions['route'] {
  const match = /^([^=\s]+)=(\d{1,3})$/.exec(value);
  if (!match) throw new InvalidArgumentError('expected VERSION_UID=WEIGHT with a whole weight, e.g. 3f0c…=90.');
  return [...previous, { version_uid: match[1], weight: Number(match[2]) }];
}

/** Creates the alias or gives it new routes (PUT /circuits/{uid}/aliases/{name}); prints the alias. */
export async function aliasSet(options: AliasSetOptions) {
  return withDatabase(async ({ sequelize }) => {
    const owner = await findUser(options.username);
    const circuit = await findCircuit(owner, options.circuit);
    const { alias } = await setCircuitAlias(sequelize, circuit, options.name, options.route);
    return restAlias(alias);
  });
}

export function register(parent: Command): void {
  parent
    .command('set')
    .description('create a version alias or give it new routes; the routes it had go to its history')
    .requiredOption('--username <username>', 'the circuit owner')
    .requiredOption('--circuit <name>', 'circuit name')
    .requiredOption('--name <alias>', 'alias name (^[a-z][a-z0-9-]{0,31}$)')
    .requiredOption('--route <version_uid=weight>', 'a route, repeated for 1 to 5 routes; weights add up to 100', parseRoute)
    .action(async (options: AliasSetOptions) => printJson(await aliasSet(options)));
}
