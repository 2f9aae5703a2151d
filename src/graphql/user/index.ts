import { ApiTokenResolver } from './api-token.resolver';
import { UserResolver } from './user.resolver';
import { ViewerResolver } from './viewer.resolver';

/** Resolvers of the user domain. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const userResolvers: [Function, ...Function[]] = [UserResolver, ViewerResolver, ApiTokenResolver];
