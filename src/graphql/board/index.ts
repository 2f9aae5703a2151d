import { BoardResolver } from './board.resolver';

/** Resolvers of the board domain. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const boardResolvers: Function[] = [BoardResolver];
