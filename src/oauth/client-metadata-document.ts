import http from 'node:http';
import https from 'node:https';
import { NetGuardError, pinnedLookup, resolvePublicTarget } from '../engine/net-guard';
import { OAuthError } from '../errors';

/** A client metadata document is a few hundred bytes; the draft suggests 5 KB as a bound. */
export const CLIENT_DOCUMENT_MAX_BYTES = 5 * 1024;
export const CLIENT_DOCUMENT_TIMEOUT_MS = 5_000;

export interface DocumentFetchOptions {
  /** Only tests reach a document on this machine; the service always refuses private addresses. */
  allowPrivate?: boolean;
  maxBytes?: number;
  timeoutMs?: number;
}

const refused = (message: string) => new OAuthError('invalid_client', `client metadata document: ${message}`);

/**
 * Reads a Client ID Metadata Document through the SSRF guard of http steps: the host resolved once,
 * every address public, the connection pinned to them. Redirects are not followed (a redirect could
 * lead anywhere the guard did not look); the body is bounded in size and the whole exchange in time.
 */
export async function fetchClientMetadataDocument(url: URL, options: DocumentFetchOptions = {}): Promise<unknown> {
  const maxBytes = options.maxBytes ?? CLIENT_DOCUMENT_MAX_BYTES;
  const timeoutMs = options.timeoutMs ?? CLIENT_DOCUMENT_TIMEOUT_MS;
  let addresses;
  try {
    addresses = await resolvePublicTarget(url, options.allowPrivate ?? false);
  } catch (error) {
    throw refused(error instanceof NetGuardError ? error.message : `cannot resolve ${url.hostname}`);
  }
  const transport = url.protocol === 'https:' ? https : http;
  const body = await new Promise<Buffer>((resolve, reject) => {
    const req = transport.request(
      url,
      {
        method: 'GET',
        headers: { accept: 'application/json', 'user-agent': 'circuit-service-oauth' },
        lookup: pinnedLookup(addresses),
        signal: AbortSignal.timeout(timeoutMs),
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(refused(`${url.href} answered HTTP ${res.statusCode} (redirects are not followed)`));
        }
        if (Number(res.headers['content-length'] ?? 0) > maxBytes) {
          req.destroy();
          return reject(refused(`larger than ${maxBytes} bytes`));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            req.destroy();
            reject(refused(`larger than ${maxBytes} bytes`));
          } else chunks.push(chunk);
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', () => reject(refused(`the answer from ${url.host} was cut off`)));
      },
    );
    req.on('error', (error: Error) =>
      reject(
        refused(
          error.name === 'AbortError' || error.name === 'TimeoutError'
            ? `no answer from ${url.host} within ${timeoutMs / 1000} s`
            : `cannot fetch ${url.href}: ${(error as NodeJS.ErrnoException).code ?? error.message}`,
        ),
      ),
    );
    req.end();
  });
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw refused('not a JSON document');
  }
}
