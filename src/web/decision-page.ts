import crypto from 'node:crypto';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { ApiServices } from '../graphql/context';
import { AppError, badInput } from '../errors';
import { ERROR_STATUS } from '../error-status';
import { findInputFlaw } from '../input-hygiene';
import { MAX_APPROVAL_COMMENT_CHARS } from '../domain/runs';
import { checkApprovalDecision, WAIT_URL_PREFIX, type ApprovalDecision, type DecisionView } from '../runs';
import { CSS } from './assets';
import { html, SafeHtml, time } from './html';
import { FAVICON_LINK } from '../http/favicon';

const FAVICON = new SafeHtml(FAVICON_LINK);

/** An approval's decision URL (src/runs/wait-urls.ts): the run, the step's path (URL-encoded) and the key. */
export const DECISION_PATH = `${WAIT_URL_PREFIX.approval}/:run/:path/:key`;

const JSON_TYPES = ['application/json', 'application/*+json'];
const FORM_TYPE = 'application/x-www-form-urlencoded';

/** A comment of MAX_APPROVAL_COMMENT_CHARS characters, percent-encoded, with room to spare. */
const form = express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 10 });

/**
 * The page's headers: no script at all, its one stylesheet inline under a nonce, forms only to this origin,
 * never framed (the key in the URL is the capability: a framed page could be clicked through), never cached,
 * and no Referer that would carry the key elsewhere.
 */
function pageHeaders(res: Response): string {
  const nonce = crypto.randomBytes(16).toString('base64');
  res.set({
    'Cache-Control': 'no-store',
    'Content-Security-Policy': `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Robots-Tag': 'noindex',
  });
  return nonce;
}

const PAGE_CSS = `${CSS}
textarea { width: 100%; padding: .6rem .7rem; border: 1px solid var(--line); border-radius: 8px; font: inherit; background: #fff; resize: vertical; }
textarea:focus-visible { outline: 3px solid #9db5f2; outline-offset: 1px; }
.narrow.decision { max-width: 560px; }
.kicker { color: var(--muted); font-size: .85rem; margin: 0 0 .25rem; }
.prompt { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 1.05rem; margin: 1rem 0; padding: .75rem 1rem; background: var(--bg); border-radius: 8px; }
.actions { display: flex; gap: .75rem; flex-wrap: wrap; }
.decided { font-size: 1.1rem; }
.decided .comment { white-space: pre-wrap; overflow-wrap: anywhere; }
`;

function page(nonce: string, title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} · Circuit Service</title>
${FAVICON}
<style nonce="${nonce}">${PAGE_CSS}</style>
</head>
<body>
<main>
<div class="narrow decision">
${body}
</div>
</main>
</body>
</html>
`.value;
}

/** The one page of every URL that is not a decision URL: it says nothing of why (unknown run, forged or cut key). */
function notFoundPage(nonce: string): string {
  return page(
    nonce,
    'Not found',
    html`<div class="card"><h1>Not found</h1>
<p class="lead">This link does not lead to a decision. Check that it was copied in full.</p></div>`,
  );
}

function outcome(view: DecisionView): SafeHtml {
  const decision = view.decision;
  if (!decision) return html``;
  const verb = decision.approved ? 'Approved' : 'Rejected';
  return html`<div class="decided notice ${decision.approved ? 'ok' : 'error'}" role="status" data-decision="${decision.approved ? 'approved' : 'rejected'}">
  <strong>${verb}</strong>${decision.timed_out ? ' by its timeout' : ''} on ${time(new Date(decision.resolved_at))}.
  ${decision.comment ? html`<div class="comment" data-comment>${decision.comment}</div>` : ''}
</div>`;
}

/** What the page says besides the prompt, by the step's status. */
function statusPart(view: DecisionView, comment: string): SafeHtml {
  switch (view.status) {
    case 'waiting':
      return html`<form method="post">
  <div class="field"><label for="comment">Comment <span class="muted">(optional)</span></label>
    <textarea id="comment" name="comment" rows="4" maxlength="${MAX_APPROVAL_COMMENT_CHARS}">${comment}</textarea></div>
  <div class="actions">
    <button type="submit" name="approved" value="true">Approve</button>
    <button type="submit" name="approved" value="false" class="danger">Reject</button>
  </div>
</form>`;
    case 'approved':
    case 'rejected':
      return outcome(view);
    case 'expired':
      return html`<div class="notice error" role="status">The time to decide ran out: the step's timeout decides it.</div>`;
    case 'ended':
      return html`<div class="notice error" role="status">The run has ended without a decision: there is nothing left to decide.</div>`;
    case 'pending':
      return html`<div class="notice" role="status">The run has not reached this approval yet. Open this page again later.</div>`;
  }
}

function decisionPage(nonce: string, view: DecisionView, options: { notice?: string; comment?: string } = {}): string {
  return page(
    nonce,
    `Approval for ${view.circuit_name}`,
    html`<div class="card">
  <p class="kicker">Approval requested by a run of</p>
  <h1 data-circuit>${view.circuit_name}</h1>
  ${view.prompt !== null ? html`<div class="prompt" data-prompt>${view.prompt}</div>` : ''}
  ${
    view.status === 'waiting' && view.expires_at
      ? html`<p class="hint">Open until ${time(view.expires_at)}; then its timeout decides.</p>`
      : ''
  }
  ${options.notice ? html`<div class="notice error" role="alert">${options.notice}</div>` : ''}
  ${statusPart(view, options.comment ?? '')}
</div>`,
  );
}

const stringField = (body: unknown, name: string): string | undefined => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
};

/** A JSON body `{"approved": boolean, "comment"?: string | null}`, nothing else. */
function jsonDecision(body: unknown): ApprovalDecision {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw badInput('The body must be a JSON object {"approved": boolean, "comment"?: string}');
  const { approved, comment, ...rest } = body as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined)
    throw badInput(`${JSON.stringify(extra.slice(0, 60))} is not a field of a decision`, { field: extra });
  if (typeof approved !== 'boolean') throw badInput('approved must be true or false', { field: 'approved' });
  if (comment !== undefined && comment !== null && typeof comment !== 'string')
    throw badInput('comment must be a string', { field: 'comment' });
  const decision: ApprovalDecision = { approved, comment: comment ?? null };
  checkApprovalDecision(decision);
  return decision;
}

/** The form's fields: `approved` (its button) and `comment`. */
function formDecision(body: unknown): ApprovalDecision {
  const flaw = findInputFlaw(body);
  if (flaw) throw badInput(`${flaw.path} ${flaw.problem}`, { field: flaw.path });
  const approved = stringField(body, 'approved');
  if (approved !== 'true' && approved !== 'false') throw badInput('Choose Approve or Reject.', { field: 'approved' });
  const decision: ApprovalDecision = {
    approved: approved === 'true',
    comment: stringField(body, 'comment')?.trim() || null,
  };
  checkApprovalDecision(decision);
  return decision;
}

/**
 * An approval's decision URL (docs/runs.md, Decision URLs): a person without an account decides with the URL alone,
 * its key being the credential, checked in constant time before anything is read.
 *
 * - `GET`: a page with the circuit's name, the prompt, the expiry, a comment box and Approve / Reject (a plain form,
 *   no script); once decided, the decision. Any URL whose key is not the step's answers the same 404 page.
 * - `POST` with a JSON body `{"approved", "comment"?}`: 200 `{"status": "success", "payload": {"approved", "comment",
 *   "resolved_at"}}`, also for the same decision again; 409 for a different one, or a step that no longer waits; 400 for
 *   a bad body; 404 as above. Errors in the error envelope.
 * - `POST` of the page's form: decides, then 303 back to the page, which shows the outcome; a refusal is the page
 *   with the reason (and the comment kept), at the error's status.
 *
 * No CSRF token: the URL is the capability, and whoever can post to it can decide anyway. The page may not be framed.
 */
export function mountDecisionPages(app: Express, services: ApiServices): void {
  const { runs } = services;
  const params = (req: Request) => req.params as Record<string, string>;

  /** Answers an error of the page or its form as a page: the 404 page for NotFound, else the step's page with the reason. */
  const pageError = async (req: Request, res: Response, next: NextFunction, error: unknown, comment?: string) => {
    if (!(error instanceof AppError) || error.code === 'Internal') return next(error);
    const nonce = pageHeaders(res);
    if (error.code === 'NotFound') return void res.status(404).type('html').send(notFoundPage(nonce));
    try {
      const { run, path, key } = params(req);
      const view = await runs.decisionView(run, path, key);
      res
        .status(ERROR_STATUS[error.code])
        .type('html')
        .send(decisionPage(nonce, view, { notice: error.message, comment }));
    } catch (again) {
      if (again instanceof AppError && again.code === 'NotFound')
        return void res.status(404).type('html').send(notFoundPage(nonce));
      next(again);
    }
  };

  app.get(DECISION_PATH, async (req, res, next) => {
    try {
      const { run, path, key } = params(req);
      const view = await runs.decisionView(run, path, key);
      res.type('html').send(decisionPage(pageHeaders(res), view));
    } catch (error) {
      await pageError(req, res, next, error);
    }
  });

  app.post(DECISION_PATH, async (req, res, next) => {
    const { run, path, key } = params(req);
    if (req.is(JSON_TYPES)) {
      try {
        const { decision } = await runs.decideByLink(run, path, key, jsonDecision(req.body));
        res.set('Cache-Control', 'no-store').json({
          status: 'success',
          payload: { approved: decision.approved, comment: decision.comment, resolved_at: decision.resolved_at },
        });
      } catch (error) {
        next(error);
      }
      return;
    }
    if (!req.is(FORM_TYPE))
      return next(
        new AppError('UnsupportedMediaType', 'Send the decision as JSON {"approved": boolean, "comment"?: string}'),
      );
    const decide = async () => {
      const comment = stringField(req.body, 'comment');
      try {
        await runs.decideByLink(run, path, key, formDecision(req.body));
        // Back to the page (the same path), which now shows the decision.
        res.redirect(303, req.originalUrl.split('?', 1)[0]);
      } catch (error) {
        await pageError(req, res, next, error, comment);
      }
    };
    form(req, res, (parseError?: unknown) => {
      if (parseError) return next(parseError);
      void decide();
    });
  });
}
