import type { Route } from '../route';

export const runRoutes: Route[] = [];
