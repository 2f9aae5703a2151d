import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { CircuitVersion } from '../../models';
import { createCircuit } from '../../commands/createCircuit';
import { publishVersion } from '../../commands/publishVersion';
import { notFound } from '../../errors';
import { JSONScalar } from '../common/scalars';
import { isUid } from '../common/uid';
import type { AppContext } from '../context';
import { CreateCircuitInput } from './circuit.input';
import { findCircuitByNameFor, findCircuitFor } from './circuit.loader';
import { noteIfDeprecated, presentCircuit } from './circuit.presenter';
import { CircuitType, CircuitVersionType } from './circuit.type';

@Resolver(() => CircuitType)
export class CircuitResolver {
  @Authorized()
  @Mutation(() => CircuitType, { description: 'Creates a circuit owned by the caller' })
  async createCircuit(@Arg('input', () => CreateCircuitInput) input: CreateCircuitInput, @Ctx() ctx: AppContext): Promise<CircuitType> {
    const circuit = await createCircuit(ctx.services.sequelize, ctx.viewer!, input);
    return presentCircuit(ctx, circuit);
  }

  @Query(() => CircuitType, { description: 'A circuit by uid; private and protected circuits need the owner' })
  async circuit(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<CircuitType> {
    const circuit = await findCircuitFor(ctx, uid, 'read');
    noteIfDeprecated(ctx, circuit);
    return presentCircuit(ctx, circuit);
  }

  @Query(() => CircuitType, { description: 'A circuit by owner username and circuit name' })
  async circuitByName(
    @Arg('username', () => String) username: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitType> {
    const circuit = await findCircuitByNameFor(ctx, username, name, 'read');
    noteIfDeprecated(ctx, circuit);
    return presentCircuit(ctx, circuit);
  }

  @Authorized()
  @Mutation(() => CircuitVersionType, { description: 'Publishes the next immutable version; the first becomes primary' })
  async publishCircuitVersion(
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Arg('definition', () => JSONScalar) definition: unknown,
    @Arg('primary', () => Boolean, { nullable: true }) primary: boolean | null,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitVersionType> {
    const circuit = await findCircuitFor(ctx, circuitUid, 'manage');
    const version = await publishVersion(ctx.services.sequelize, ctx.viewer!, circuit, definition, primary ?? false);
    return CircuitVersionType.from(version, circuit.primary_version_uid);
  }

  @Authorized()
  @Mutation(() => CircuitType, { description: 'Makes a version the one run when none is pinned' })
  async setPrimaryCircuitVersion(
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Arg('versionUid', () => ID) versionUid: string,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitType> {
    const circuit = await findCircuitFor(ctx, circuitUid, 'manage');
    const version = isUid(versionUid) ? await CircuitVersion.findByPk(versionUid) : null;
    if (!version || version.circuit_uid !== circuit.uid) throw notFound('Circuit version');
    await circuit.update({ primary_version_uid: version.uid });
    return presentCircuit(ctx, circuit);
  }
}
