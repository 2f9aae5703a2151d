import { Field, ID, Int, ObjectType } from 'type-graphql';
import type { Board as BoardModel, BoardStar as BoardStarModel } from '../../models/boards';
import { PageOf } from '../common/pagination';

@ObjectType('Board')
export class BoardType {
  @Field(() => ID) uid!: string;
  @Field(() => String) name!: string;
  @Field(() => String) description!: string;
  @Field(() => String, { description: "Owner's username" }) username!: string;
  @Field(() => Boolean) isPrivate!: boolean;
  @Field(() => Boolean, { description: 'Protected from being copied' }) isProtected!: boolean;
  @Field(() => Int, { description: 'Circuits in the board that the caller may list' }) circuitCount!: number;
  @Field(() => Int) starCount!: number;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;

  static from(board: BoardModel, username: string, circuitCount: number, starCount: number): BoardType {
    return Object.assign(new BoardType(), {
      uid: board.uid,
      name: board.name,
      description: board.description,
      username,
      isPrivate: board.is_private,
      isProtected: board.is_protected,
      circuitCount,
      starCount,
      createdAt: board.created_at,
      updatedAt: board.updated_at,
    });
  }
}

@ObjectType('BoardPage')
export class BoardPage extends PageOf(BoardType) {}

/** A user's star on a board. */
@ObjectType('BoardStar')
export class BoardStarType {
  @Field(() => ID) userUid!: string;
  @Field(() => ID) boardUid!: string;
  @Field(() => Date) createdAt!: Date;

  static from(star: BoardStarModel): BoardStarType {
    return Object.assign(new BoardStarType(), {
      userUid: star.user_uid,
      boardUid: star.board_uid,
      createdAt: star.created_at,
    });
  }
}
