import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { QueryTypes } from 'sequelize';
import { Board, BoardStar } from '../../models/boards';
import { notFound } from '../../errors';
import { authorize } from '../../policies/authorize';
import { circuitPermits } from '../../policies/circuit.policy';
import { boardPermits } from '../../policies/board.policy';
import { listableCircuitsSql } from '../../policies/circuit.policy';
import type { AppContext } from '../context';
import { isUid } from '../../ids';
import { PageArgs, paged, pageWindow } from '../common/pagination';
import { CircuitPage, CircuitType } from '../circuit/circuit.type';
import { presentCircuit } from '../circuit/circuit.presenter';
import { CreateBoardInput, UpdateBoardInput } from './board.input';
import { findBoardByName, findBoardByNameFor, findBoardFor } from './board.access';
import { presentBoard } from './board.presenter';
import { BoardPage, BoardStarType, BoardType } from './board.type';
import { createBoard } from '../../commands/create-board';
import { updateBoard } from '../../commands/update-board';
import { deleteBoard } from '../../commands/delete-board';
import { addCircuitToBoard } from '../../commands/add-circuit-to-board';
import { removeCircuitFromBoard } from '../../commands/remove-circuit-from-board';
import { starBoard } from '../../commands/star-board';
import { unstarBoard } from '../../commands/unstar-board';

@Resolver(() => BoardType)
export class BoardResolver {
  @Authorized()
  @Mutation(() => BoardType, {
    description: 'Creates a board owned by the caller; a name the caller already uses is a Conflict',
  })
  async createBoard(
    @Arg('input', () => CreateBoardInput) input: CreateBoardInput,
    @Ctx() ctx: AppContext,
  ): Promise<BoardType> {
    return presentBoard(ctx, await createBoard(ctx.viewer!, input));
  }

  @Authorized()
  @Mutation(() => BoardType, { description: 'Changes the fields given (owner only)' })
  async updateBoard(
    @Arg('uid', () => ID) uid: string,
    @Arg('input', () => UpdateBoardInput) input: UpdateBoardInput,
    @Ctx() ctx: AppContext,
  ): Promise<BoardType> {
    const board = await findBoardFor(ctx, uid, 'manage');
    return presentBoard(ctx, await updateBoard(board, input));
  }

  @Authorized()
  @Mutation(() => Boolean, {
    description: 'Deletes the board with its memberships and stars; never its circuits (owner only). Always true',
  })
  async deleteBoard(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<boolean> {
    await deleteBoard(await findBoardFor(ctx, uid, 'manage'));
    return true;
  }

  @Query(() => BoardType, { description: 'A board by uid; private boards only to their owner' })
  async board(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<BoardType> {
    return presentBoard(ctx, await findBoardFor(ctx, uid, 'read'));
  }

  @Query(() => BoardType, {
    description: 'A board by owner username and board name; private boards only to their owner',
  })
  async boardByName(
    @Arg('username', () => String) username: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: AppContext,
  ): Promise<BoardType> {
    return presentBoard(ctx, await findBoardByNameFor(ctx, username, name, 'read'));
  }

  @Authorized()
  @Query(() => BoardPage, { description: "The caller's boards, newest first (limit default 10, max 100)" })
  async myBoards(@Args(() => PageArgs) args: PageArgs, @Ctx() ctx: AppContext): Promise<BoardPage> {
    const window = pageWindow(args);
    const { rows, count } = await Board.findAndCountAll({
      where: { owner_uid: ctx.viewer!.uid },
      order: [
        ['created_at', 'DESC'],
        ['uid', 'ASC'],
      ],
      limit: window.limit,
      offset: window.offset,
    });
    return paged(await Promise.all(rows.map((b) => presentBoard(ctx, b))), count, window);
  }

  @Query(() => CircuitPage, {
    description:
      'The circuits of a board that the caller may list, most recently added first (limit default 10, max 100)',
  })
  async boardCircuits(
    @Arg('boardUid', () => ID) boardUid: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitPage> {
    const board = await findBoardFor(ctx, boardUid, 'read');
    const window = pageWindow(args);
    const listable = listableCircuitsSql('c', ctx.viewer);
    const where = `bc.board_uid = :boardUid AND ${listable.sql}`;
    const replacements = { boardUid: board.uid, limit: window.limit, offset: window.offset, ...listable.replacements };
    const sequelize = ctx.services.sequelize;
    const [rows, [{ n }]] = await Promise.all([
      sequelize.query<{ uid: string }>(
        `SELECT c.uid FROM board_circuits bc JOIN circuits c ON c.uid = bc.circuit_uid WHERE ${where}
          ORDER BY bc.created_at DESC, c.uid LIMIT :limit OFFSET :offset`,
        { type: QueryTypes.SELECT, replacements },
      ),
      sequelize.query<{ n: string }>(
        `SELECT count(*) AS n FROM board_circuits bc JOIN circuits c ON c.uid = bc.circuit_uid WHERE ${where}`,
        { type: QueryTypes.SELECT, replacements },
      ),
    ]);
    const circuits = await Promise.all(rows.map((r) => ctx.loaders.circuit.load(r.uid)));
    const items: CircuitType[] = await Promise.all(
      circuits.filter((c) => c !== null).map((c) => presentCircuit(ctx, c)),
    );
    return paged(items, Number(n), window);
  }

  @Authorized()
  @Mutation(() => BoardType, {
    description: 'Adds a circuit the owner may list to the board (owner only); adding it twice changes nothing',
  })
  async addCircuitToBoard(
    @Arg('boardUid', () => ID) boardUid: string,
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Ctx() ctx: AppContext,
  ): Promise<BoardType> {
    const board = await findBoardFor(ctx, boardUid, 'manage');
    const circuit = isUid(circuitUid) ? await ctx.loaders.circuit.load(circuitUid) : null;
    if (!circuit) throw notFound('Circuit');
    authorize(ctx.viewer, circuitPermits(ctx.viewer, circuit, 'list'), 'You may not add a circuit you cannot see');
    await addCircuitToBoard(board, circuit);
    return presentBoard(ctx, board);
  }

  @Authorized()
  @Mutation(() => BoardType, {
    description:
      'Removes a circuit from the board, never the circuit itself (owner only). NotFound when the circuit is not in the board',
  })
  async removeCircuitFromBoard(
    @Arg('boardUid', () => ID) boardUid: string,
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Ctx() ctx: AppContext,
  ): Promise<BoardType> {
    const board = await findBoardFor(ctx, boardUid, 'manage');
    if (!isUid(circuitUid) || !(await removeCircuitFromBoard(board, circuitUid)))
      throw notFound('Circuit in this board');
    return presentBoard(ctx, board);
  }

  @Authorized()
  @Query(() => BoardStarType, { description: "The caller's star on a board; NotFound when not starred" })
  async boardStar(
    @Arg('username', () => String) username: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: AppContext,
  ): Promise<BoardStarType> {
    const board = await findBoardByNameFor(ctx, username, name, 'read');
    const star = await BoardStar.findOne({ where: { user_uid: ctx.viewer!.uid, board_uid: board.uid } });
    if (!star) throw notFound('Star');
    return BoardStarType.from(star);
  }

  @Authorized()
  @Mutation(() => BoardStarType, {
    description: 'Stars a board the caller may read; starring twice keeps the first star',
  })
  async starBoard(
    @Arg('username', () => String) username: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: AppContext,
  ): Promise<BoardStarType> {
    const board = await findBoardByNameFor(ctx, username, name, 'read');
    return BoardStarType.from(await starBoard(ctx.viewer!, board));
  }

  @Authorized()
  @Mutation(() => Boolean, { description: 'Unstars a board; unstarring one not starred changes nothing. Always true' })
  async unstarBoard(
    @Arg('username', () => String) username: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: AppContext,
  ): Promise<boolean> {
    const board = await findBoardByNameFor(ctx, username, name, 'read');
    await unstarBoard(ctx.viewer!, board);
    return true;
  }

  @Query(() => Boolean, { description: 'Whether the caller can read the board; false for an unknown board' })
  async boardPing(
    @Arg('username', () => String) username: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: AppContext,
  ): Promise<boolean> {
    const board = await findBoardByName(username, name);
    return board !== null && boardPermits(ctx.viewer, board, 'read');
  }
}
