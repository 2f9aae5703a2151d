import type { Request, RequestHandler, Router } from 'express';
import { Circuit, User } from '../../models';
import { CircuitRun } from '../../models/CircuitRun';
import { TAG, type RunState } from '../../domain/runs';
import { presentRunPayload, runCredits, type MyRunsFilter } from '../../runs';
import { ledgerPage } from '../../credits/ledger';
import { AppError } from '../../errors';
import { isUid } from '../../ids';
import { runPermits } from '../../policies/run.policy';
import type { ApiServices } from '../../graphql/context';
import crypto from 'node:crypto';
import {
  creditsPage,
  filterQuery,
  RUN_STATES,
  runPage,
  runsPage,
  type RunRow,
  type RunsPageFilter,
} from '../account-pages';
import { messagePage } from '../pages';
import { csrfToken, save } from '../session';
import { requireCsrf, requireUser, signedInUser, takeFlash } from './guards';

const PER_PAGE = 50;

function pageOf(req: Request): number {
  const raw = typeof req.query.page === 'string' && /^\d{1,6}$/.test(req.query.page) ? Number(req.query.page) : 1;
  return Math.max(1, raw);
}

/** The Runs page's filter from a query string or a form: values that are not a state, a uid or a tag are left out. */
function filterOf(source: unknown): RunsPageFilter {
  const value = (name: string) => {
    const raw = (source as Record<string, unknown> | undefined)?.[name];
    return typeof raw === 'string' && raw !== '' ? raw : null;
  };
  const state = value('state');
  const circuit = value('circuit_uid');
  const tag = value('tag');
  return {
    state: state && (RUN_STATES as readonly string[]).includes(state) ? state : null,
    circuit_uid: circuit && isUid(circuit) ? circuit : null,
    tag: tag && TAG.test(tag) ? tag : null,
  };
}

const asMyRunsFilter = (filter: RunsPageFilter): MyRunsFilter => ({
  state: filter.state as RunState | null,
  circuitUid: filter.circuit_uid,
  tag: filter.tag,
});

/** The circuits the user has runs of (at most 200), for the filter's choices: `owner/name`. */
async function circuitsOfRuns(user: User): Promise<Array<{ uid: string; label: string }>> {
  const rows = await CircuitRun.findAll({
    where: { user_uid: user.uid },
    attributes: ['circuit_uid'],
    group: ['circuit_uid'],
    limit: 200,
    raw: true,
  });
  const circuits = await Circuit.findAll({
    where: { uid: rows.map((row) => row.circuit_uid) },
    attributes: ['uid', 'name', 'owner_uid'],
  });
  const owners = await User.findAll({
    where: { uid: [...new Set(circuits.map((circuit) => circuit.owner_uid))] },
    attributes: ['uid', 'username'],
  });
  const usernameOf = new Map(owners.map((owner) => [owner.uid, owner.username]));
  return circuits
    .map((circuit) => ({ uid: circuit.uid, label: `${usernameOf.get(circuit.owner_uid) ?? ''}/${circuit.name}` }))
    .sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}

/** The caller's runs, newest first (the query behind viewer.runs), with each circuit's name and owner, and the owner's view of a failure. */
async function runRows(runs: ApiServices['runs'], user: User, filter: RunsPageFilter, page: number): Promise<RunRow[]> {
  const { rows } = await runs.myRuns(user.uid, asMyRunsFilter(filter), {
    limit: PER_PAGE + 1,
    offset: (page - 1) * PER_PAGE,
  });
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
    return runRow(
      run,
      presentRunPayload(run, { mayDebug: true }),
      circuit?.name ?? '',
      circuit ? (usernameOf.get(circuit.owner_uid) ?? '') : '',
    );
  });
}

/** A run as the Runs page shows it, from the owner's view of it (`shown`, the run presenter's payload). */
function runRow(run: CircuitRun, shown: Record<string, unknown>, circuitName: string, circuitOwner: string): RunRow {
  return {
    uid: run.uid,
    state: run.state,
    created_at: run.created_at,
    ended_at: run.ended_at ?? null,
    circuit_uid: run.circuit_uid,
    circuit_name: circuitName,
    circuit_owner: circuitOwner,
    ...runCredits(run),
    error: (shown.error as RunRow['error'] | undefined) ?? null,
  };
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

/**
 * A Cancel or Replay form of the Runs page: the same commands as POST /api/v1/users/circuit-runs/cancel and /replay,
 * on the signed-in user's own runs of the page's filter, with the form's Idempotency-Key (a form sent twice acts once).
 */
async function bulkFromForm(
  services: ApiServices,
  user: User,
  action: 'cancel' | 'replay',
  body: unknown,
): Promise<{ kind: 'ok' | 'error'; message: string }> {
  const filter = asMyRunsFilter(filterOf(body));
  const key = field(body, 'idempotency_key') ?? null;
  const plural = (n: number, one: string) => `${n.toLocaleString('en-US')} ${one}${n === 1 ? '' : 's'}`;
  try {
    if (action === 'cancel') {
      const { matched, canceled, truncated } = await services.runs.cancelMatching(user, filter, key);
      return {
        kind: 'ok',
        message: `${plural(canceled, 'run')} asked to stop, of ${plural(matched, 'run')} of the filter in flight${truncated ? ' (the oldest 10,000: cancel again for the rest)' : ''}. They end as Canceled.`,
      };
    }
    const { matched, replayed, batch_uid, truncated } = await services.runs.replayMatching(user, filter, null, key);
    return {
      kind: 'ok',
      message:
        replayed === 0
          ? 'No ended run of the filter to replay.'
          : `${plural(replayed, 'run')} replayed as batch ${batch_uid}, of ${plural(matched, 'ended run')} of the filter${truncated ? ' (the oldest 10,000)' : ''}.`,
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
      const filter = filterOf(req.query);
      // The filter form sends every field: the address keeps only those set (it is the one to bookmark).
      if (['state', 'circuit_uid', 'tag'].some((name) => req.query[name] === '')) {
        const query = filterQuery(filter);
        return res.redirect(303, `/settings/runs${query ? `?${query}` : ''}`);
      }
      const page = pageOf(req);
      const [rows, waiting, circuits, counts] = await Promise.all([
        runRows(services.runs, user, filter, page),
        services.runs.waitingApprovalsOf(user.uid),
        circuitsOfRuns(user),
        services.runs.countMyRuns(user.uid, asMyRunsFilter(filter)),
      ]);
      res.send(
        runsPage({
          user,
          csrf: csrfToken(req),
          runs: rows.slice(0, PER_PAGE),
          hasMore: rows.length > PER_PAGE,
          page,
          filter,
          circuits,
          counts,
          idempotencyKey: `settings-${crypto.randomUUID()}`,
          waiting,
          flash: takeFlash(req),
        }),
      );
    } catch (error) {
      next(error);
    }
  });

  router.get('/runs/:uid', requireUser, async (req, res, next) => {
    try {
      const user = signedInUser(res);
      const uid = String(req.params.uid);
      const run = isUid(uid) ? await CircuitRun.findByPk(uid) : null;
      // Someone else's run, public or not, is answered as no run at all: this section is the user's own runs.
      if (!run || !runPermits(user, run, 'debug')) {
        return res.status(404).send(
          messagePage({
            title: 'Not found',
            message: 'There is no such run of yours.',
            user,
            csrf: csrfToken(req),
            link: { href: '/settings/runs', label: 'Back to runs' },
          }),
        );
      }
      const circuit = await Circuit.findByPk(run.circuit_uid, { attributes: ['uid', 'name', 'owner_uid'] });
      const owner = circuit ? await User.findByPk(circuit.owner_uid, { attributes: ['username'] }) : null;
      const payload = presentRunPayload(run, { mayDebug: true });
      res.send(
        runPage({
          user,
          csrf: csrfToken(req),
          run: runRow(run, payload, circuit?.name ?? '', owner?.username ?? ''),
          payload,
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

  for (const action of ['cancel', 'replay'] as const) {
    router.post(`/runs/${action}`, requireUser, form, requireCsrf, async (req, res, next) => {
      try {
        req.session.flash = await bulkFromForm(services, signedInUser(res), action, req.body);
        await save(req);
        const query = filterQuery(filterOf(req.body));
        res.redirect(303, `/settings/runs${query ? `?${query}` : ''}`);
      } catch (error) {
        next(error);
      }
    });
  }

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
