import {
  Arg,
  Args,
  Authorized,
  Ctx,
  Directive,
  FieldResolver,
  ID,
  Mutation,
  Query,
  Resolver,
  Root,
} from 'type-graphql';
import { Op } from 'sequelize';
import { Circuit, CircuitAdaptor, CircuitVersion, User } from '../../models';
import { versionOfAlias } from '../../aliases/alias-version';
import { circuitModule } from '../../clients/circuit-module';
import { isUid } from '../../ids';
import { createCircuit } from '../../commands/create-circuit';
import { publishVersion } from '../../commands/publish-version';
import { updateCircuit } from '../../commands/update-circuit';
import { deprecateCircuit } from '../../commands/deprecate-circuit';
import { setPrimaryVersion } from '../../commands/set-primary-version';
import { badInput, notFound } from '../../errors';
import { circuitPermits, listableCircuitsWhere } from '../../policies/circuit.policy';
import { JSONScalar } from '../common/scalars';
import { PageArgs, pageWindow, paged } from '../common/pagination';
import type { AppContext } from '../context';
import { CreateCircuitInput, UpdateCircuitInput } from './circuit.input';
import { findCircuitByNameFor, findCircuitFor } from './circuit.access';
import { presentCircuit } from './circuit.presenter';
import { CircuitAdaptorType, CircuitPage, CircuitType, CircuitVersionPage, CircuitVersionType } from './circuit.type';

@Resolver(() => CircuitType)
export class CircuitResolver {
  @Authorized()
  @Mutation(() => CircuitType, { description: 'Creates a circuit owned by the caller' })
  async createCircuit(
    @Arg('input', () => CreateCircuitInput) input: CreateCircuitInput,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitType> {
    const circuit = await createCircuit(ctx.services.sequelize, ctx.viewer!, input);
    return presentCircuit(ctx, circuit);
  }

  @Query(() => CircuitType, { description: 'A circuit by uid; private and protected circuits need the owner' })
  async circuit(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<CircuitType> {
    const circuit = await findCircuitFor(ctx, uid, 'read');
    return presentCircuit(ctx, circuit);
  }

  @Query(() => String, {
    description:
      "A dependency-free TypeScript module for running the circuit, typed from a version's query_schema and output_schema: the primary version, `version`, or the version `alias` draws for the types (its runs then send the alias). Same read rules as the circuit.",
  })
  async circuitClientModule(
    @Arg('uid', () => ID) uid: string,
    @Arg('version', () => ID, { nullable: true }) version: string | undefined,
    @Arg('alias', () => String, { nullable: true }) alias: string | undefined,
    @Ctx() ctx: AppContext,
  ): Promise<string> {
    if (version != null && alias != null) throw badInput('Send version or alias, not both');
    const circuit = await findCircuitFor(ctx, uid, 'read');
    const versionUid =
      alias != null ? await versionOfAlias(circuit, alias, 'client.ts') : (version ?? circuit.primary_version_uid);
    const row =
      versionUid && isUid(versionUid)
        ? await CircuitVersion.findOne({ where: { uid: versionUid, circuit_uid: circuit.uid } })
        : null;
    if (!row) throw notFound('Circuit version');
    const adaptor = await CircuitAdaptor.findOne({ where: { circuit_uid: circuit.uid }, attributes: ['uid'] });
    if (!adaptor) throw notFound('Circuit adaptor');
    return circuitModule({
      apiUrl: `${ctx.baseUrl}/api/v1`,
      circuitUid: circuit.uid,
      circuitName: circuit.name,
      adaptorUid: adaptor.uid,
      versionUid: row.uid,
      versionNumber: row.number,
      alias: alias ?? null,
      querySchema: row.definition.query_schema,
      outputSchema: row.definition.output_schema,
    });
  }

  @Query(() => CircuitType, { description: 'A circuit by owner username and circuit name' })
  async circuitByName(
    @Arg('username', () => String) username: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitType> {
    const circuit = await findCircuitByNameFor(ctx, username, name, 'read');
    return presentCircuit(ctx, circuit);
  }

  @Query(() => ID, {
    description:
      'The uid of the primary version (the one run when none is pinned). Allowed to whoever may read or run the circuit.',
  })
  async circuitPrimaryVersion(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<string> {
    const circuit = await findCircuitFor(ctx, uid, ['read', 'run']);
    if (!circuit.primary_version_uid) throw notFound('Primary version');
    return circuit.primary_version_uid;
  }

  @Query(() => CircuitPage, {
    description:
      "A user's circuits, newest first: public and protected ones to anyone; private ones only to their owner",
  })
  async userCircuits(
    @Arg('username', () => String) username: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitPage> {
    const owner = await User.findOne({ where: { username } });
    if (!owner) throw notFound('User');
    const window = pageWindow(args);
    const { rows, count } = await Circuit.findAndCountAll({
      where: { [Op.and]: [{ owner_uid: owner.uid }, listableCircuitsWhere(ctx.viewer)] },
      order: [
        ['created_at', 'DESC'],
        ['uid', 'ASC'],
      ],
      limit: window.limit,
      offset: window.offset,
    });
    const items = await Promise.all(rows.map((c) => presentCircuit(ctx, c)));
    return paged(items, count, window);
  }

  @Query(() => CircuitVersionPage, { description: 'The versions of a circuit, newest first' })
  async circuitVersions(
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitVersionPage> {
    const circuit = await findCircuitFor(ctx, circuitUid, 'read');
    const window = pageWindow(args);
    const { rows, count } = await CircuitVersion.findAndCountAll({
      where: { circuit_uid: circuit.uid },
      order: [['number', 'DESC']],
      limit: window.limit,
      offset: window.offset,
    });
    return paged(
      rows.map((v) => CircuitVersionType.from(v, circuit.primary_version_uid)),
      count,
      window,
    );
  }

  @Authorized()
  @Mutation(() => CircuitType, {
    description: "Changes a circuit's description, flags or license (owner only); only the fields given change",
  })
  async updateCircuit(
    @Arg('username', () => String) username: string,
    @Arg('name', () => String) name: string,
    @Arg('input', () => UpdateCircuitInput) input: UpdateCircuitInput,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitType> {
    const circuit = await findCircuitByNameFor(ctx, username, name, 'manage');
    await updateCircuit(circuit, input);
    return presentCircuit(ctx, circuit);
  }

  @Authorized()
  @Mutation(() => CircuitType, {
    description: 'Deprecates a circuit and all its versions (owner only); they still run',
  })
  async deprecateCircuit(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<CircuitType> {
    const circuit = await findCircuitFor(ctx, uid, 'manage');
    await deprecateCircuit(ctx.services.sequelize, circuit);
    return presentCircuit(ctx, circuit);
  }

  @Authorized()
  @Directive('@cost(weight: 50)')
  @Mutation(() => CircuitVersionType, {
    description: 'Publishes the next immutable version; the first becomes primary',
  })
  async publishCircuitVersion(
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Arg('definition', () => JSONScalar, { validate: false }) definition: unknown, // JSON literals have no prototype; class-validator chokes on them
    @Arg('primary', () => Boolean, { nullable: true }) primary: boolean | null,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitVersionType> {
    const circuit = await findCircuitFor(ctx, circuitUid, 'manage');
    const version = await publishVersion(ctx.services, ctx.viewer!, circuit, definition, primary ?? false);
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
    await setPrimaryVersion(circuit, versionUid);
    return presentCircuit(ctx, circuit);
  }

  @FieldResolver(() => CircuitVersionType, {
    nullable: true,
    description:
      'The primary version; null when there is none or the caller may not read the circuit (protected ones in lists)',
  })
  async primaryVersion(@Root() root: CircuitType, @Ctx() ctx: AppContext): Promise<CircuitVersionType | null> {
    if (!root.primaryVersionUid) return null;
    const circuit = await ctx.loaders.circuit.load(root.uid);
    if (!circuit || !circuitPermits(ctx.viewer, circuit, 'read')) return null;
    const version = await ctx.loaders.version.load(root.primaryVersionUid);
    return version ? CircuitVersionType.from(version, root.primaryVersionUid) : null;
  }

  @FieldResolver(() => [CircuitAdaptorType], {
    description: "The circuit's adaptors (the default `query` adaptor first)",
  })
  async adaptors(@Root() root: CircuitType, @Ctx() ctx: AppContext): Promise<CircuitAdaptorType[]> {
    return (await ctx.loaders.adaptorsOfCircuit.load(root.uid)).map((adaptor) => CircuitAdaptorType.from(adaptor));
  }
}
