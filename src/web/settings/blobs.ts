import type { Request, Response, Router } from 'express';
import multer from 'multer';
import { Blob } from '../../models/blobs';
import { AppError } from '../../errors';
import { uploadBlobStream } from '../../commands/upload-blob';
import type { BlobStorage } from '../../storage/BlobStorage';
import { ERROR_STATUS } from '../../error-status';
import { closeAfterAnswer } from '../../http/json-body';
import { blobsPage, Flash } from '../pages';
import { csrfToken, csrfValid, save } from '../session';
import { formExpired, requireUser, signedInUser, takeFlash } from './guards';
import { createUploadSlots, type UploadSlots } from './upload-slots';

const BLOBS_PER_PAGE = 50;

/** Uploads read at once: 2 per user, 8 in all, 64 more of one user waiting (docs/limits.md, Blob uploads). */
export const UPLOAD_SLOTS = { perUser: 2, total: 8, waitingPerUser: 64 };

/** The Blobs section: upload a file (size-limited), list your blobs a page at a time. */
export function mountBlobs(
  router: Router,
  storage: BlobStorage,
  slots: UploadSlots = createUploadSlots(UPLOAD_SLOTS),
): void {
  const multipart = multer({
    storage: streamingStorage(storage),
    // One byte over the limit reaches uploadBlobStream, which refuses it (PayloadTooLarge).
    limits: { fileSize: storage.maxBytes + 1, files: 1, fields: 10, fieldSize: 4096, parts: 12 },
  }).single('file');

  const showBlobs = async (req: Request, res: Response, status: number, flash?: Flash) => {
    const user = signedInUser(res);
    const rawPage = typeof req.query.page === 'string' && /^\d{1,6}$/.test(req.query.page) ? Number(req.query.page) : 1;
    const page = Math.max(1, rawPage);
    const rows = await Blob.findAll({
      where: { user_uid: user.uid },
      order: [
        ['created_at', 'DESC'],
        ['uid', 'ASC'],
      ],
      limit: BLOBS_PER_PAGE + 1,
      offset: (page - 1) * BLOBS_PER_PAGE,
    });
    res.status(status).send(
      blobsPage({
        user,
        csrf: csrfToken(req),
        blobs: rows.slice(0, BLOBS_PER_PAGE),
        hasMore: rows.length > BLOBS_PER_PAGE,
        page,
        flash,
        maxBytes: storage.maxBytes,
      }),
    );
  };

  router.get('/blobs', requireUser, async (req, res, next) => {
    try {
      await showBlobs(req, res, 200, takeFlash(req));
    } catch (error) {
      next(error);
    }
  });

  router.post(
    '/blobs',
    requireUser,
    (req, res, next) => {
      // Unread until admitted: the kernel's buffers, then the client, hold the rest of the body.
      req.pause();
      slots.acquire(signedInUser(res).uid).then(async (release) => {
        if (!release) {
          closeAfterAnswer(req, res);
          res.set('Retry-After', '5');
          return showBlobs(req, res, ERROR_STATUS.RateLimited, {
            kind: 'error',
            message: `You have ${UPLOAD_SLOTS.waitingPerUser} uploads waiting already; wait for them to finish.`,
          }).catch(next);
        }
        res.once('close', release);
        // The client went away while it waited.
        if (req.destroyed || res.closed) return release();
        next();
      }, next);
    },
    (req, res, next) => {
      multipart(req, res, (error: unknown) => {
        res.locals.uploadError = error;
        next();
      });
    },
    async (req, res, next) => {
      // The body timeout answered already (408, src/http/json-body.ts): the upload was dropped, nothing is stored.
      if (res.headersSent) return;
      try {
        const uploadError = res.locals.uploadError as unknown;
        // Showing an error changes nothing, so it needs no CSRF check; storing does.
        if (uploadError === FORM_EXPIRED) return formExpired(req, res);
        if (uploadError instanceof AppError && uploadError.code !== 'Internal') {
          const message =
            uploadError.code === 'PayloadTooLarge'
              ? `The file is larger than the limit of ${storage.maxBytes} bytes.`
              : uploadError.message;
          return await showBlobs(req, res, ERROR_STATUS[uploadError.code], { kind: 'error', message });
        }
        if (uploadError instanceof multer.MulterError) {
          const tooLarge = uploadError.code === 'LIMIT_FILE_SIZE';
          const message = tooLarge
            ? `The file is larger than the limit of ${storage.maxBytes} bytes.`
            : `The upload was not accepted: ${uploadError.message}.`;
          return await showBlobs(req, res, ERROR_STATUS[tooLarge ? 'PayloadTooLarge' : 'BadClientData'], {
            kind: 'error',
            message,
          });
        }
        if (uploadError) {
          req.log?.error({ err: uploadError }, 'blob upload failed');
          return await showBlobs(req, res, ERROR_STATUS.Internal, {
            kind: 'error',
            message: 'The upload failed and nothing was stored. Please try again.',
          });
        }
        if (!csrfValid(req)) return formExpired(req, res);
        const blob = (req.file as (Express.Multer.File & { blob?: Blob }) | undefined)?.blob;
        if (!blob)
          return await showBlobs(req, res, ERROR_STATUS.BadClientData, {
            kind: 'error',
            message: 'Choose a file to upload.',
          });
        req.session.flash = {
          kind: 'ok',
          message: `Uploaded ${blob.filename || 'the file'} (${blob.byteCount} bytes). Its uid:`,
          code: blob.uid,
        };
        await save(req);
        res.redirect(303, '/settings/blobs');
      } catch (error) {
        next(error);
      }
    },
  );
}

/** Refusal of a file part whose form came without a valid CSRF token (the token field precedes the file). */
const FORM_EXPIRED = new Error('form expired');

/**
 * A multer storage engine that streams the file part into the blob storage as it arrives
 * (uploadBlobStream), so an upload holds a buffer, not the file. The CSRF token is checked before
 * anything is stored: the form sends it ahead of the file.
 */
function streamingStorage(storage: BlobStorage): multer.StorageEngine {
  return {
    _handleFile(req, file, callback) {
      if (!csrfValid(req as Request)) return callback(FORM_EXPIRED);
      const res = (req as Request).res!;
      // multer decodes the multipart filename as latin1; browsers send UTF-8.
      const filename = Buffer.from(file.originalname, 'latin1').toString('utf8');
      uploadBlobStream(storage, signedInUser(res), { filename, stream: file.stream }).then(
        (blob) => callback(null, { blob, size: blob.byteCount } as Partial<Express.Multer.File>),
        (error: unknown) => callback(error as Error),
      );
    },
    _removeFile(_req, file, callback) {
      const blob = (file as Express.Multer.File & { blob?: Blob }).blob;
      if (!blob) return callback(null);
      // A request that failed after its file was stored (another part over a limit): remove both.
      Promise.all([blob.destroy(), storage.delete(blob.uid)]).then(
        () => callback(null),
        (error: unknown) => callback(error as Error),
      );
    },
  };
}
