import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { CircuitAlias, CircuitAliasHistory, type Circuit } from '../../models';
import { setCircuitAlias } from '../../commands/set-circuit-alias';
import { deleteCircuitAlias } from '../../commands/delete-circuit-alias';
import { notFound } from '../../errors';
import { circuitPermits } from '../../policies/circuit.policy';
import { PageArgs, paged, pageWindow } from '../common/pagination';
import type { AppContext } from '../context';
import { findCircuitFor } from './circuit.access';
import { CircuitType } from './circuit.type';
import {
  CircuitAliasHistoryEntryType,
  CircuitAliasHistoryPage,
  CircuitAliasPage,
  CircuitAliasRouteInput,
  CircuitAliasType,
} from './circuit-alias.type';

async function findAlias(circuit: Circuit, name: string): Promise<CircuitAlias> {
  const alias = await CircuitAlias.findOne({ where: { circuit_uid: circuit.uid, name } });
  if (!alias) throw notFound('Alias');
  return alias;
}

/**
 * Version aliases (docs/releases.md, Aliases): read by whoever may read the circuit (so a private circuit's aliases
 * answer exactly as the circuit does: 401/403/404), set and deleted by its owner only.
 */
@Resolver(() => CircuitType)
export class CircuitAliasResolver {
  @Authorized()
  @Mutation(() => CircuitAliasType, {
    description:
      'Creates an alias or gives it new routes (owner only); the routes it had go to its history. A rollback is this with routes from circuitAliasHistory',
  })
  async setCircuitAlias(
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Arg('name', () => String, { description: '^[a-z][a-z0-9-]{0,31}$' }) name: string,
    @Arg('routes', () => [CircuitAliasRouteInput], {
      description: '1–5 routes to versions of the circuit, whole weights 1–100 adding up to 100',
    })
    routes: CircuitAliasRouteInput[],
    @Ctx() ctx: AppContext,
  ): Promise<CircuitAliasType> {
    const circuit = await findCircuitFor(ctx, circuitUid, 'manage');
    const { alias } = await setCircuitAlias(
      ctx.services.sequelize,
      circuit,
      name,
      routes.map((r) => ({ version_uid: r.versionUid, weight: r.weight })),
    );
    return CircuitAliasType.from(alias);
  }

  @Authorized()
  @Mutation(() => CircuitAliasType, {
    description: 'Deletes an alias and its history (owner only); answers the alias as it was. Its runs keep its name',
  })
  async deleteCircuitAlias(
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitAliasType> {
    const circuit = await findCircuitFor(ctx, circuitUid, 'manage');
    return CircuitAliasType.from(await deleteCircuitAlias(ctx.services.sequelize, circuit, name));
  }

  @Query(() => CircuitAliasPage, {
    description: "A circuit's aliases by name; readable by whoever may read the circuit",
  })
  async circuitAliases(
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitAliasPage> {
    const circuit = await findCircuitFor(ctx, circuitUid, 'read');
    const window = pageWindow(args);
    const { rows, count } = await CircuitAlias.findAndCountAll({
      where: { circuit_uid: circuit.uid },
      order: [['name', 'ASC']],
      limit: window.limit,
      offset: window.offset,
    });
    return paged(
      rows.map((alias) => CircuitAliasType.from(alias)),
      count,
      window,
    );
  }

  @Query(() => CircuitAliasType, { description: 'One alias of a circuit; readable by whoever may read the circuit' })
  async circuitAlias(
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitAliasType> {
    const circuit = await findCircuitFor(ctx, circuitUid, 'read');
    return CircuitAliasType.from(await findAlias(circuit, name));
  }

  @Query(() => CircuitAliasHistoryPage, {
    description: 'Every route set an alias had before its current one, newest first',
  })
  async circuitAliasHistory(
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Arg('name', () => String) name: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitAliasHistoryPage> {
    const circuit = await findCircuitFor(ctx, circuitUid, 'read');
    const alias = await findAlias(circuit, name);
    const window = pageWindow(args);
    const { rows, count } = await CircuitAliasHistory.findAndCountAll({
      where: { circuit_uid: circuit.uid, name: alias.name },
      order: [
        ['replaced_at', 'DESC'],
        ['uid', 'ASC'],
      ],
      limit: window.limit,
      offset: window.offset,
    });
    return paged(
      rows.map((entry) => CircuitAliasHistoryEntryType.from(entry)),
      count,
      window,
    );
  }

  @FieldResolver(() => [CircuitAliasType], {
    nullable: true,
    description:
      "The circuit's aliases by name; null when the caller may not read the circuit (protected ones in lists)",
  })
  async aliases(@Root() root: CircuitType, @Ctx() ctx: AppContext): Promise<CircuitAliasType[] | null> {
    const circuit = await ctx.loaders.circuit.load(root.uid);
    if (!circuit || !circuitPermits(ctx.viewer, circuit, 'read')) return null;
    return (await ctx.loaders.aliasesOfCircuit.load(root.uid)).map((alias) => CircuitAliasType.from(alias));
  }
}
