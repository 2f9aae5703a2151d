import crypto from 'node:crypto';
import type { Request } from 'express';
import { authenticate, Authentication } from '../auth/authenticate';
import type { User } from '../models';
import type { Services } from '../services';
import { createLoaders, Loaders } from './loaders';

export interface Notice { code: string; message: string }

/** What every resolver receives; built the same way for /graphql, the REST bridge and SSE. */
export interface AppContext {
  requestId: string;
  auth: Authentication;
  viewer: User | null;
  clientIp: string;
  services: Services;
  loaders: Loaders;
  /** Notices for the response (e.g. deprecation); REST puts them beside `payload`. */
  notices: Notice[];
  /** Headers a resolver wants on the HTTP response (Retry-After, RateLimit-*, Deprecation). */
  responseHeaders: Record<string, string>;
}

export async function buildContext(services: Services, req: Pick<Request, 'headers' | 'ip'> & { id?: unknown }): Promise<AppContext> {
  const auth = await authenticate(req.headers.authorization);
  return {
    requestId: typeof req.id === 'string' ? req.id : crypto.randomUUID(),
    auth,
    viewer: auth.kind === 'token' ? auth.user : null,
    clientIp: req.ip ?? 'unknown',
    services,
    loaders: createLoaders(),
    notices: [],
    responseHeaders: {},
  };
}

export function addNotice(ctx: AppContext, notice: Notice): void {
  if (!ctx.notices.some((n) => n.code === notice.code && n.message === notice.message)) ctx.notices.push(notice);
  if (notice.code === 'deprecated') ctx.responseHeaders['Deprecation'] = 'true';
}
