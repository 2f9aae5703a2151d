import type { Route } from '../route';

export const blobRoutes: Route[] = [];
