import { setCircuitAlias } from '../../commands/set-circuit-alias';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findCircuit, findUser, restAlias } from '../present';
import type { AliasRoute } from '../options';

export interface AliasSetOptions {
  username: string;
  circuit: string;
  name: string;
  route: AliasRoute[];
}

/** Creates the alias or gives it new routes (PUT /circuits/{uid}/aliases/{name}); prints the alias. */
export async function aliasSet(io: CliIo, options: AliasSetOptions) {
  return withDatabase(io, async ({ sequelize }) => {
    const owner = await findUser(options.username);
    const circuit = await findCircuit(owner, options.circuit);
    const { alias } = await setCircuitAlias(sequelize, circuit, options.name, options.route);
    return restAlias(alias);
  });
}
