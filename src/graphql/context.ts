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
  /** The service's public origin as the caller reached it (`http://host:port`), for absolute URLs. */
  baseUrl: string;
}

const HOST_HEADER = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/** `${protocol}://${host}` of the request; a missing or odd Host header falls back to the listen address. */
function requestBaseUrl(services: Services, req: { headers: Request['headers']; protocol?: string }): string {
  const protocol = req.protocol === 'https' ? 'https' : 'http';
  const host = req.headers.host;
  if (host && HOST_HEADER.test(host)) return `${protocol}://${host}`;
  const { host: listenHost, port } = services.config;
  return `${protocol}://${listenHost.includes(':') ? `[${listenHost}]` : listenHost}:${port}`;
}

export async function buildContext(services: Services, req: Pick<Request, 'headers' | 'ip'> & { id?: unknown; protocol?: string }): Promise<AppContext> {
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
    baseUrl: requestBaseUrl(services, req),
  };
}

/** Adds a notice; a deprecation also sets `Deprecation: @<epoch seconds>` (RFC 9745), the earliest when several. */
export function addNotice(ctx: AppContext, notice: Notice, deprecatedAt?: Date | null): void {
  if (!ctx.notices.some((n) => n.code === notice.code && n.message === notice.message)) ctx.notices.push(notice);
  if (notice.code === 'deprecated') {
    const seconds = Math.floor((deprecatedAt ?? new Date()).getTime() / 1000);
    const current = ctx.responseHeaders['Deprecation'];
    if (!current || seconds < Number(current.slice(1))) ctx.responseHeaders['Deprecation'] = `@${seconds}`;
  }
}
