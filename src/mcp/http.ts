import fs from 'node:fs';
import path from 'node:path';
import type { Express, Request, Response } from 'express';
import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import { toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import { authenticate } from '../auth/authenticate';
import { notAllowed, unauthorized } from '../errors';
import { BODY_LIMIT_BYTES } from '../http/json-body';
import { errorEnvelope } from '../error-status';
import { PROJECT_ROOT } from '../paths';
import type { User } from '../models';
import type { ApiServices } from '../graphql/context';
import { InflightCalls } from './inflight-calls';
import { serveLegacyMcp } from './legacy';
import { createModernMcpServer } from './modern-server';
import { mcpOriginCheck } from './origin';
import { primeEventStream } from './sse-priming';
import { bearerChallenge, oauthUrls } from '../oauth/metadata';

export const MCP_PATH = '/mcp';

const JSON_TYPES = ['application/json', 'application/*+json'];

function jsonRpcError(
  res: Response,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res
    .status(status)
    .set({ 'Cache-Control': 'no-store', ...headers })
    .json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * The caller of an /mcp request, or the 401 answered (the one place /mcp authenticates: bearer API
 * tokens through the service's authentication).
 */
async function authenticateMcp(services: ApiServices, req: Request, res: Response): Promise<User | null> {
  const auth = await authenticate(services.tokenCache, req.headers.authorization);
  if (auth.kind === 'token') return auth.user;
  const { status, body } = errorEnvelope(auth.kind === 'invalid' ? unauthorized(auth.message) : unauthorized());
  res
    .status(status)
    .set({
      // Names the protected resource metadata, from which a client finds where to get a token.
      'WWW-Authenticate': bearerChallenge(
        oauthUrls(services.config.publicUrl ?? '', MCP_PATH),
        auth.kind === 'invalid',
      ),
      'Cache-Control': 'no-store',
    })
    .json(body);
  return null;
}

/**
 * `/mcp` (docs/mcp.md): the Model Context Protocol over streamable HTTP, for the holder of a bearer
 * token. Stateless: any API process answers any request. A request with an `Origin` that is not
 * allowed is 403, before anything else. A 2026-07-28 request (one with the per-request `_meta`
 * envelope, `server/discover` included) is served by the current SDK (src/mcp/modern-server.ts); any
 * other (2025-era `initialize` and what follows it, GET, DELETE) by the 1.x SDK (src/mcp/legacy.ts),
 * which keeps the 2025-11-25 tasks. Bodies go through the service's JSON parser first (1 MiB → 413,
 * the input-hygiene checks → 400, both in the REST envelope).
 */
export function mountMcp(app: Express, services: ApiServices): void {
  const inflight = new InflightCalls();
  const { version } = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    version: string;
  };
  const originAllowed = mcpOriginCheck(services.config);
  const modern = toNodeHandler(
    createMcpHandler(
      ({ authInfo }) => createModernMcpServer({ services, version, viewer: authInfo?.extra?.viewer as User }),
      { legacy: 'reject', onerror: (error) => services.log.debug({ err: error }, 'mcp: rejected request') },
    ),
    { maxRequestBodySize: BODY_LIMIT_BYTES },
  );

  app.all(MCP_PATH, async (req: Request, res: Response) => {
    res.locals.route = MCP_PATH;
    const origin = req.headers.origin;
    if (!originAllowed(origin)) {
      const { status, body } = errorEnvelope(notAllowed(`Origin ${String(origin).slice(0, 200)} is not allowed`));
      res.status(status).set('Cache-Control', 'no-store').json(body);
      return;
    }
    const viewer = await authenticateMcp(services, req, res);
    if (!viewer) return;
    if (req.method === 'POST' && req.body === undefined && req.is(JSON_TYPES))
      return jsonRpcError(res, 400, -32700, 'Parse error: the body is empty');
    primeEventStream(res);

    if (req.method === 'POST' && !(await isLegacyRequest(await toWebRequest(req, req.body)))) {
      const node = Object.assign(req, {
        auth: { token: '', clientId: viewer.uid, scopes: [], extra: { viewer } },
      });
      await modern(node, res, req.body);
      return;
    }
    if (req.method !== 'POST') {
      return jsonRpcError(res, 405, -32000, 'Method not allowed: this server is stateless; POST JSON-RPC messages', {
        Allow: 'POST',
      });
    }
    await serveLegacyMcp(req, res, { services, version, viewer, inflight });
  });
}
