import fs from 'node:fs';
import type { Express, Request, Response } from 'express';
import { Blob } from '../models/blobs';
import { AppError, notAllowed, notFound } from '../errors';
import { errorEnvelope } from '../error-status';
import { isUid } from '../ids';
import { LocalStorage, LOCAL_CONTENT_PATH } from '../storage';
import type { ApiServices } from '../graphql/context';

function fail(res: Response, error: AppError): void {
  const response = errorEnvelope(error);
  res.status(response.status).set('Cache-Control', 'no-store').json(response.body);
}

/** `filename*=UTF-8''…` plus an ASCII fallback, as RFC 6266 asks. */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_') || 'blob';
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename || 'blob')}`;
}

/**
 * Serves the content behind the local store's signed URLs (GET /blob-content/:uid?expires&signature).
 * A tampered or expired link is 403. The content is sent as an attachment, sandboxed and unsniffed,
 * so an uploaded HTML file can never run as a page of this origin.
 */
export function mountBlobContent(app: Express, services: ApiServices): void {
  app.get(`${LOCAL_CONTENT_PATH}/:uid`, async (req: Request, res: Response) => {
    const storage = services.blobStorage;
    const uid = String(req.params.uid);
    if (!(storage instanceof LocalStorage) || !isUid(uid)) return fail(res, notFound('Blob'));
    const check = storage.checkSignature(uid, req.query.expires, req.query.signature);
    if (check === 'invalid') return fail(res, notAllowed('The download link is invalid'));
    if (check === 'expired') return fail(res, notAllowed('The download link has expired'));
    try {
      const blob = await Blob.findByPk(uid);
      if (!blob) return fail(res, notFound('Blob'));
      const file = storage.filePath(uid);
      const stat = await fs.promises.stat(file).catch(() => null);
      if (!stat) {
        req.log?.error({ blob: uid, file }, 'blob content missing from local storage');
        return fail(res, notFound('Blob content'));
      }
      res.status(200).set({
        'Content-Length': String(stat.size),
        'Content-Disposition': contentDisposition(blob.filename),
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': "default-src 'none'; sandbox",
        'Cache-Control': 'private, no-store',
        ETag: `"${blob.hash}"`,
      });
      // setHeader, not res.set: Express would append a charset the stored content may not have.
      res.setHeader('Content-Type', blob.mime_type ?? 'application/octet-stream');
      if (req.method === 'HEAD') return void res.end();
      const stream = fs.createReadStream(file);
      stream.on('error', (error) => {
        req.log?.error({ err: error, blob: uid }, 'error streaming blob content');
        res.destroy(error);
      });
      stream.pipe(res);
    } catch (error) {
      req.log?.error({ err: error, blob: uid }, 'error serving blob content');
      if (!res.headersSent) fail(res, new AppError('Internal', 'Internal server error'));
    }
  });
}
