import type { Route } from '../route';

export const searchRoutes: Route[] = [];
