import type { Express } from 'express';
import type { ApiServices } from '../graphql/context';
import { resolveSecret } from '../storage/secret';
import { mountBlobContent } from './blob-content';
import { createWebSession } from './session';
import { settingsRouter } from './settings';
import type { ConsentDeps } from './settings/oauth-consent';

export interface MountedWeb {
  close(): Promise<void>;
}

/**
 * Mounts the service's own web surfaces: the local store's signed blob content
 * (/blob-content/:uid) and the settings pages (/settings, with their session store).
 */
export function mountWeb(app: Express, services: ApiServices, oauth: ConsentDeps): MountedWeb {
  mountBlobContent(app, services);
  const session = createWebSession(services.sequelize, resolveSecret(services.config), services.log);
  app.use('/settings', session.middleware, settingsRouter(services, oauth));
  return { close: () => session.close() };
}
