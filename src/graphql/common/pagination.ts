import { ArgsType, ClassType, Field, Int, ObjectType } from 'type-graphql';
import { IsInt, IsOptional, Min } from 'class-validator';

@ArgsType()
export class PageArgs {
  @Field(() => Int, { nullable: true, description: 'Items per page (default 10; capped per list)' })
  @IsOptional()
  @IsInt()
  @Min(1)
  limit?: number;

  @Field(() => Int, { nullable: true, description: '1-based page number (default 1)' })
  @IsOptional()
  @IsInt()
  @Min(1)
  page?: number;
}

export interface PageWindow {
  limit: number;
  page: number;
  offset: number;
}

/** Applies the default and the cap of a list (default 10, cap 100 unless a list says otherwise; docs/api-conventions.md). */
export function pageWindow(args: PageArgs, { defaultLimit = 10, maxLimit = 100 } = {}): PageWindow {
  const limit = Math.min(args.limit ?? defaultLimit, maxLimit);
  const page = args.page ?? 1;
  return { limit, page, offset: (page - 1) * limit };
}

export interface Paged<T> {
  totalCount: number;
  limit: number;
  page: number;
  items: T[];
}

export function paged<T>(items: T[], totalCount: number, window: PageWindow): Paged<T> {
  return { items, totalCount, limit: window.limit, page: window.page };
}

/** A page of `Item`s: `totalCount`, `limit`, `page` and `items`; subclass it with `@ObjectType('XPage')`. */
export function PageOf<T extends object>(Item: ClassType<T>) {
  @ObjectType()
  class Page {
    @Field(() => Int) totalCount!: number;
    @Field(() => Int) limit!: number;
    @Field(() => Int) page!: number;
    @Field(() => [Item]) items!: T[];
  }
  return Page;
}
