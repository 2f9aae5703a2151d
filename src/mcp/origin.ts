import type { Config } from '../config';

/**
 * The origins a browser page may call /mcp from: the service's own (PUBLIC_URL, else the listened
 * address) and those in CORS_ORIGINS. The transport requires refusing any other `Origin` (a page on
 * another site, or a DNS-rebinding attacker's host name that resolves to this server).
 */
export function mcpOriginCheck(config: Config): (origin: string | undefined) => boolean {
  // PUBLIC_URL is filled in with the listened address once the server listens (src/app.ts).
  const ownOrigin = () =>
    config.publicUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  return (origin) => {
    if (origin === undefined) return true;
    let normalized: string;
    try {
      normalized = new URL(origin).origin;
    } catch {
      return false;
    }
    return normalized === new URL(ownOrigin()).origin || config.corsOrigins.includes(normalized);
  };
}
