import type { Route } from './route';
import { circuitRoutes } from './routes/circuits';
import { runRoutes } from './routes/runs';
import { boardRoutes } from './routes/boards';
import { searchRoutes } from './routes/search';
import { blobRoutes } from './routes/blobs';
import { userRoutes } from './routes/users';
import { webhookRoutes } from './routes/webhooks';
import { scheduleRoutes } from './routes/schedules';
import { aliasRoutes } from './routes/aliases';
import { batchRoutes } from './routes/batches';

/** Every documented REST path (the API contract), relative to /api/v1. */
export const routes: Route[] = [
  ...circuitRoutes,
  ...aliasRoutes,
  ...runRoutes,
  ...boardRoutes,
  ...searchRoutes,
  ...blobRoutes,
  ...userRoutes,
  ...webhookRoutes,
  ...scheduleRoutes,
  ...batchRoutes,
];
