import type { Express, NextFunction, Request, Response } from 'express';
import { API_PREFIX } from '../../rest-bridge/express';
import { AppError } from '../errors';
import type { ApiServices } from '../graphql/context';

export const CALLBACK_PATH = `${API_PREFIX}/callbacks/:run/:path/:key`;

/**
 * The callback URL of a signal wait (docs/runs.md, Signals and callback URLs): `POST` with a JSON body (at most
 * 1 MiB, the body limit of every route) and no token. 202 `{accepted: true}`, also for the same body again; 409
 * when the step has another signal or no longer waits, or the run has ended; 400 when the body fails the step's
 * schema (it keeps waiting) or is not JSON; 404 for any URL whose key is not the step's, decided before anything
 * is read, so an unknown run and a forged key answer alike. Not a route of the REST table: its body is any
 * JSON value, its answer 202 and its origin any (the URL's key is the only credential: src/http/cors.ts answers `*` here).
 */
export function mountWaitCallbacks(app: Express, services: ApiServices): void {
  app.post(CALLBACK_PATH, async (req: Request, res: Response, next: NextFunction) => {
    try {
      const { run, path, key } = req.params as Record<string, string>;
      if (!req.is(['application/json', 'application/*+json']))
        throw new AppError('BadClientData', 'The signal must be a JSON body (Content-Type: application/json)');
      const data: unknown = req.body === undefined ? null : req.body;
      await services.runs.signalByCallback(run, path, key, data);
      res.status(202).json({ status: 'success', payload: { accepted: true } });
    } catch (error) {
      next(error);
    }
  });
}
