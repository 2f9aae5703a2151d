import { Arg, Args, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { QueryTypes } from 'sequelize';
import { Circuit } from '../../models';
import { setCircuitStar } from '../../commands/star-circuit';
import { circuitPermits, listableCircuitsSql } from '../../policies/circuit.policy';
import { PageArgs, pageWindow, paged } from '../common/pagination';
import type { AppContext } from '../context';
import { findCircuitByName, findCircuitByNameFor } from './circuit.access';
import { presentCircuit } from './circuit.presenter';
import { CircuitPage, CircuitStarState } from './circuit.type';

/** The starred list holds up to 50 (a page of at most 50; by default all 50; docs/spec-decisions.md). */
export const STARRED_LIMIT = 50;
/** At most 200 embedding circuits are listed, across all pages (docs/spec-decisions.md). */
export const EMBEDS_TOTAL_CAP = 200;

@Resolver()
export class CircuitSocialResolver {
  @Authorized()
  @Mutation(() => CircuitStarState, {
    description: 'Stars a circuit the caller may list; starring twice changes nothing',
  })
  async starCircuit(
    @Arg('username', () => String) username: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitStarState> {
    const circuit = await findCircuitByNameFor(ctx, username, name, 'list');
    return Object.assign(
      new CircuitStarState(),
      await setCircuitStar(ctx.services.sequelize, ctx.viewer!, circuit, true),
    );
  }

  @Authorized()
  @Mutation(() => CircuitStarState, {
    description: "Removes the caller's star; unstarring an unstarred circuit changes nothing",
  })
  async unstarCircuit(
    @Arg('username', () => String) username: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitStarState> {
    const circuit = await findCircuitByNameFor(ctx, username, name, 'list');
    return Object.assign(
      new CircuitStarState(),
      await setCircuitStar(ctx.services.sequelize, ctx.viewer!, circuit, false),
    );
  }

  @Authorized()
  @Query(() => Boolean, { description: 'Whether the caller has starred the circuit' })
  async circuitStarred(
    @Arg('username', () => String) username: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: AppContext,
  ): Promise<boolean> {
    const circuit = await findCircuitByNameFor(ctx, username, name, 'list');
    const [row] = await ctx.services.sequelize.query(
      'SELECT 1 FROM circuit_stars WHERE user_uid = :user AND circuit_uid = :circuit',
      {
        replacements: { user: ctx.viewer!.uid, circuit: circuit.uid },
        type: QueryTypes.SELECT,
      },
    );
    return row !== undefined;
  }

  @Authorized()
  @Query(() => CircuitPage, {
    description: `The circuits the caller has starred and may still list, most recently starred first; pages of at most ${STARRED_LIMIT} (default ${STARRED_LIMIT})`,
  })
  async starredCircuits(@Args(() => PageArgs) args: PageArgs, @Ctx() ctx: AppContext): Promise<CircuitPage> {
    const window = pageWindow(args, { defaultLimit: STARRED_LIMIT, maxLimit: STARRED_LIMIT });
    const sequelize = ctx.services.sequelize;
    const listable = listableCircuitsSql('c', ctx.viewer);
    const from = `FROM circuit_stars s JOIN circuits c ON c.uid = s.circuit_uid WHERE s.user_uid = :user AND ${listable.sql}`;
    const replacements = {
      ...listable.replacements,
      user: ctx.viewer!.uid,
      limit: window.limit,
      offset: window.offset,
    };
    const [rows, [{ count }]] = await Promise.all([
      sequelize.query(`SELECT c.* ${from} ORDER BY s.created_at DESC, c.uid LIMIT :limit OFFSET :offset`, {
        replacements,
        model: Circuit,
        mapToModel: true,
      }),
      sequelize.query<{ count: string }>(`SELECT count(*) AS count ${from}`, { replacements, type: QueryTypes.SELECT }),
    ]);
    const items = await Promise.all(rows.map((c) => presentCircuit(ctx, c)));
    return paged(items, Number(count), window);
  }

  @Query(() => Boolean, {
    description: 'Whether the caller may read the circuit (false when it does not exist); needs no token',
  })
  async circuitPing(
    @Arg('username', () => String) username: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: AppContext,
  ): Promise<boolean> {
    const circuit = await findCircuitByName(username, name);
    return circuit !== null && circuitPermits(ctx.viewer, circuit, 'read');
  }

  @Query(() => CircuitPage, {
    description: `The circuits whose versions embed this one (and the caller may list), newest first; at most ${EMBEDS_TOTAL_CAP} in all`,
  })
  async circuitEmbeds(
    @Arg('username', () => String) username: string,
    @Arg('name', () => String) name: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitPage> {
    const circuit = await findCircuitByNameFor(ctx, username, name, 'list');
    const window = pageWindow(args);
    const sequelize = ctx.services.sequelize;
    const listable = listableCircuitsSql('c', ctx.viewer);
    const from = `FROM circuits c WHERE c.uid IN (SELECT e.circuit_uid FROM circuit_embeds e WHERE e.embedded_circuit_uid = :embedded)
      AND ${listable.sql}`;
    const limit = Math.max(0, Math.min(window.limit, EMBEDS_TOTAL_CAP - window.offset));
    const replacements = { ...listable.replacements, embedded: circuit.uid, limit, offset: window.offset };
    const [rows, [{ count }]] = await Promise.all([
      limit === 0
        ? Promise.resolve([] as Circuit[])
        : sequelize.query(`SELECT c.* ${from} ORDER BY c.created_at DESC, c.uid LIMIT :limit OFFSET :offset`, {
            replacements,
            model: Circuit,
            mapToModel: true,
          }),
      sequelize.query<{ count: string }>(`SELECT count(*) AS count ${from}`, { replacements, type: QueryTypes.SELECT }),
    ]);
    const items = await Promise.all(rows.map((c) => presentCircuit(ctx, c)));
    return paged(items, Math.min(Number(count), EMBEDS_TOTAL_CAP), window);
  }
}
