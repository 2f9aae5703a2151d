import type { Request, Router } from 'express';
import { QueryTypes } from 'sequelize';
import { User } from '../../models';
import { CircuitRun } from '../../models/CircuitRun';
import { ledgerPage } from '../../credits/ledger';
import { creditsPage, RUN_STATES, runsPage, type RunRow } from '../account-pages';
import { csrfToken } from '../session';
import { requireUser, signedInUser } from './guards';

const PER_PAGE = 50;

function pageOf(req: Request): number {
  const raw = typeof req.query.page === 'string' && /^\d{1,6}$/.test(req.query.page) ? Number(req.query.page) : 1;
  return Math.max(1, raw);
}

/** The caller's runs, newest first, with the circuit's name and the owner-safe failure when runs record one. */
async function runRows(user: User, state: string | null, page: number): Promise<RunRow[]> {
  const hasError = 'error' in CircuitRun.getAttributes();
  const rows = await CircuitRun.sequelize!.query<RunRow & { credits_cost: string | null; credits_held: string }>(
    `SELECT r.uid, r.state, r.created_at, r.ended_at, r.credits_cost, r.credits_held, r.circuit_uid,
            c.name AS circuit_name, o.username AS circuit_owner, ${hasError ? 'r.error' : 'NULL::jsonb'} AS error
       FROM circuit_runs r
       JOIN circuits c ON c.uid = r.circuit_uid
       JOIN users o ON o.uid = c.owner_uid
      WHERE r.user_uid = :user ${state ? 'AND r.state = :state' : ''}
      ORDER BY r.created_at DESC, r.uid DESC
      LIMIT :limit OFFSET :offset`,
    { replacements: { user: user.uid, state, limit: PER_PAGE + 1, offset: (page - 1) * PER_PAGE }, type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({
    ...row,
    credits_cost: row.credits_cost === null ? null : Number(row.credits_cost),
    credits_held: Number(row.credits_held),
  }));
}

/** The Runs section (state, circuit, failure reason, credits) and the Credits section (balance, ledger). */
export function mountAccount(router: Router): void {
  router.get('/runs', requireUser, async (req, res, next) => {
    try {
      const user = signedInUser(res);
      const state = typeof req.query.state === 'string' && (RUN_STATES as readonly string[]).includes(req.query.state) ? req.query.state : null;
      const page = pageOf(req);
      const rows = await runRows(user, state, page);
      res.send(runsPage({ user, csrf: csrfToken(req), runs: rows.slice(0, PER_PAGE), hasMore: rows.length > PER_PAGE, page, state }));
    } catch (error) {
      next(error);
    }
  });

  router.get('/credits', requireUser, async (req, res, next) => {
    try {
      const user = signedInUser(res);
      const page = pageOf(req);
      const { rows } = await ledgerPage(user.uid, { limit: PER_PAGE + 1, offset: (page - 1) * PER_PAGE });
      res.send(creditsPage({ user, csrf: csrfToken(req), ledger: rows.slice(0, PER_PAGE), hasMore: rows.length > PER_PAGE, page }));
    } catch (error) {
      next(error);
    }
  });
}
