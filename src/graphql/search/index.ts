import { SearchResolver } from './search.resolver';

/** Resolvers of the search domain. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const searchResolvers: Function[] = [SearchResolver];
