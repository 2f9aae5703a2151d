import type { Route } from '../route';

export const boardRoutes: Route[] = [];
