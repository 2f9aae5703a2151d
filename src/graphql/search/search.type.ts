import { createUnionType, Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';

/**
 * How many matches a search ranks and counts, per kind (circuits, users). Up to this many, `total_count`
 * is exact and every match is ranked; beyond it `total_count` is this bound (a lower bound of the
 * matches), pages end there, and the ranking looks at this many of the matches (whichever the index
 * yields first) plus every exact name match, which still comes first. Documented in the README and on
 * `GET /search` in the OpenAPI document.
 */
export const SEARCH_MATCH_BOUND = 1000;

/** What a search looks through (REST `type`): lower-case, as the REST parameter is. */
export enum SearchType {
  all = 'all',
  circuits = 'circuits',
  users = 'users',
}
registerEnumType(SearchType, { name: 'SearchType', description: 'What a search looks through; default all' });

/** A public circuit found by a search. */
@ObjectType('CircuitSearchResult')
export class CircuitSearchResult {
  @Field(() => String, { description: 'Always "circuit"' }) type!: 'circuit';
  @Field(() => ID) uid!: string;
  @Field(() => String) name!: string;
  @Field(() => String) description!: string;
  @Field(() => String, { description: "Owner's username" }) username!: string;
}

/** A public user profile found by a search. */
@ObjectType('UserSearchResult')
export class UserSearchResult {
  @Field(() => String, { description: 'Always "user"' }) type!: 'user';
  @Field(() => ID) uid!: string;
  @Field(() => String) username!: string;
  @Field(() => String) name!: string;
  @Field(() => String) bio!: string;
}

// No `resolveType`: type-graphql then resolves by class (the items are built as these classes),
// synchronously (its wrapper around a given resolveType is async).
export const SearchResult = createUnionType({
  name: 'SearchResult',
  types: () => [CircuitSearchResult, UserSearchResult] as const,
});

@ObjectType('SearchPage')
export class SearchPage {
  @Field(() => Int, {
    description: `Matches in all pages, exact up to ${SEARCH_MATCH_BOUND}; beyond, ${SEARCH_MATCH_BOUND} (and pages end there)`,
  })
  totalCount!: number;
  @Field(() => Int) limit!: number;
  @Field(() => Int) page!: number;
  @Field(() => [SearchResult], { description: 'Best match first; an exact name match ranks first' })
  items!: (CircuitSearchResult | UserSearchResult)[];
}
