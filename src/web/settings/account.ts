import type { Request, RequestHandler, Router } from 'express';
import { Circuit, User } from '../../models';
import { CircuitRun } from '../../models/CircuitRun';
import type { RunState } from '../../domain/runs';
import { presentRunPayload } from '../../runs';
import { ledgerPage } from '../../credits/ledger';
import { AppError } from '../../errors';
import { isUid } from '../../ids';
import { runPermits } from '../../policies/run.policy';
import type { ApiServices } from '../../graphql/context';
import { creditsPage, RUN_STATES, runsPage, type RunRow } from '../account-pages';
import { csrfToken, save } from '../session';
import { requireCsrf, requireUser, signedInUser, takeFlash } from './guards';

const PER_PAGE = 50;

function pageOf(req: Request): number {
  const raw = typeof req.query.page === 'string' && /^\d{1,6}$/.test(req.query.page) ? Number(req.query.page) : 1;
  return Math.max(1, raw);
}

/** The caller's runs, newest first (the query behind viewer.runs), with each circuit's name and owner, and the owner's view of a failure. */
async function runRows(runs: ApiServices['runs'], user: User, state: RunState | null, page: number): Promise<RunRow[]> {
  const { rows } = await runs.myRuns(user.uid, { state }, { limit: PER_PAGE + 1, offset: (page - 1) * PER_PAGE });
  const circuits = await Circuit.findAll({
    where: { uid: [...new Set(rows.map((run) => run.circuit_uid))] },
    attributes: ['uid', 'name', 'owner_uid'],
  });
  const owners = await User.findAll({
    where: { uid: [...new Set(circuits.map((circuit) => circuit.owner_uid))] },
    attributes: ['uid', 'username'],
  });
  const circuitOf = new Map(circuits.map((circuit) => [circuit.uid, circuit]));
  const usernameOf = new Map(owners.map((owner) => [owner.uid, owner.username]));
  return rows.map((run) => {
    const circuit = circuitOf.get(run.circuit_uid);
    const shown = presentRunPayload(run, { mayDebug: true });
    return {
      uid: run.uid,
      state: run.state,
      created_at: run.created_at,
      ended_at: run.ended_at ?? null,
      circuit_uid: run.circuit_uid,
      circuit_name: circuit?.name ?? '',
      circuit_owner: circuit ? (usernameOf.get(circuit.owner_uid) ?? '') : '',
      credits_cost: run.credits_cost === null || run.credits_cost === undefined ? null : Number(run.credits_cost),
      credits_held: Number(run.get('credits_held') ?? 0),
      error: (shown.error as RunRow['error'] | undefined) ?? null,
    };
  });
}

const field = (body: unknown, name: string): string | undefined => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * An Approve / Reject form of the Runs page: the same command as POST /api/v1/circuit-runs/{uid}/approvals/{step_id},
 * for the signed-in user's own runs only (run policy `approve`); the outcome is a message on the page.
 */
async function decideFromForm(
  services: ApiServices,
  user: User,
  body: unknown,
): Promise<{ kind: 'ok' | 'error'; message: string }> {
  const runUid = field(body, 'run_uid') ?? '';
  const stepId = field(body, 'step_id') ?? '';
  const decision = field(body, 'decision');
  if (decision !== 'approve' && decision !== 'reject') return { kind: 'error', message: 'Choose Approve or Reject.' };
  const run = isUid(runUid)
    ? await CircuitRun.findByPk(runUid, { attributes: ['uid', 'user_uid', 'is_public'] })
    : null;
  // Someone else's run is answered as no run at all: the page lists only the user's own.
  if (!run || !runPermits(user, run, 'approve')) return { kind: 'error', message: 'There is no such run of yours.' };
  const comment = field(body, 'comment')?.trim() || null;
  try {
    const { repeated } = await services.runs.approve(run.uid, stepId, { approved: decision === 'approve', comment });
    const verb = decision === 'approve' ? 'approved' : 'rejected';
    return {
      kind: 'ok',
      message: repeated
        ? `Step ${stepId} was already ${verb}.`
        : `Step ${stepId} ${verb}. The run goes on${decision === 'reject' ? ' to end as rejected' : ''}.`,
    };
  } catch (error) {
    if (error instanceof AppError && error.code !== 'Internal') return { kind: 'error', message: error.message };
    throw error;
  }
}

/** The Runs section (state, circuit, failure reason, credits, approvals waiting) and the Credits section (balance, ledger). */
export function mountAccount(router: Router, services: ApiServices, form: RequestHandler): void {
  router.get('/runs', requireUser, async (req, res, next) => {
    try {
      const user = signedInUser(res);
      const state =
        typeof req.query.state === 'string' && (RUN_STATES as readonly string[]).includes(req.query.state)
          ? (req.query.state as RunState)
          : null;
      const page = pageOf(req);
      const [rows, waiting] = await Promise.all([
        runRows(services.runs, user, state, page),
        services.runs.waitingApprovalsOf(user.uid),
      ]);
      res.send(
        runsPage({
          user,
          csrf: csrfToken(req),
          runs: rows.slice(0, PER_PAGE),
          hasMore: rows.length > PER_PAGE,
          page,
          state,
          waiting,
          flash: takeFlash(req),
        }),
      );
    } catch (error) {
      next(error);
    }
  });

  router.post('/runs/approvals', requireUser, form, requireCsrf, async (req, res, next) => {
    try {
      req.session.flash = await decideFromForm(services, signedInUser(res), req.body);
      await save(req);
      res.redirect(303, '/settings/runs');
    } catch (error) {
      next(error);
    }
  });

  router.get('/credits', requireUser, async (req, res, next) => {
    try {
      const user = signedInUser(res);
      const page = pageOf(req);
      const { rows } = await ledgerPage(user.uid, { limit: PER_PAGE + 1, offset: (page - 1) * PER_PAGE });
      res.send(
        creditsPage({
          user,
          csrf: csrfToken(req),
          ledger: rows.slice(0, PER_PAGE),
          hasMore: rows.length > PER_PAGE,
          page,
        }),
      );
    } catch (error) {
      next(error);
    }
  });
}
