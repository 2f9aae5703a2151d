import { createUnionType, Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';

/** What a search looks through (REST `type`): lower-case, as the REST parameter is. */
export enum SearchType {
  all = 'all',
  circuits = 'circuits',
  users = 'users',
}
registerEnumType(SearchType, { name: 'SearchType', description: 'What a search looks through; default all' });

/** A public circuit found by a search (spec §2.7). */
@ObjectType('CircuitSearchResult')
export class CircuitSearchResult {
  @Field(() => String, { description: 'Always "circuit"' }) type!: 'circuit';
  @Field(() => ID) uid!: string;
  @Field(() => String) name!: string;
  @Field(() => String) description!: string;
  @Field(() => String, { description: "Owner's username" }) username!: string;
}

/** A public user profile found by a search (spec §2.7). */
@ObjectType('UserSearchResult')
export class UserSearchResult {
  @Field(() => String, { description: 'Always "user"' }) type!: 'user';
  @Field(() => ID) uid!: string;
  @Field(() => String) username!: string;
  @Field(() => String) name!: string;
  @Field(() => String) bio!: string;
}

// No `resolveType`: type-graphql then resolves by class (the items are built as these classes), and
// synchronously. Its wrapper around a given resolveType is async, which graphql-jit (the REST
// bridge's compiled execution, rest-bridge/compiled.ts) cannot resolve.
export const SearchResult = createUnionType({
  name: 'SearchResult',
  types: () => [CircuitSearchResult, UserSearchResult] as const,
});

@ObjectType('SearchPage')
export class SearchPage {
  @Field(() => Int, { description: 'Matches in all pages' }) totalCount!: number;
  @Field(() => Int) limit!: number;
  @Field(() => Int) page!: number;
  @Field(() => [SearchResult], { description: 'Best match first; an exact name match ranks first' })
  items!: (CircuitSearchResult | UserSearchResult)[];
}
