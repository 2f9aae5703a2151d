import type { User } from '../models';
import type { CreditLedger } from '../models/CreditLedger';
import type { WaitingApproval } from '../runs';
import { html, SafeHtml, time } from './html';
import { csrfField, type Flash, sectionPage } from './pages';

import { RUN_STATES } from '../domain/runs';

export { RUN_STATES };

/** A run as the Runs page lists it. */
export interface RunRow {
  uid: string;
  state: string;
  created_at: Date;
  ended_at: Date | null;
  circuit_uid: string;
  circuit_name: string;
  circuit_owner: string;
  /** What the run cost (ended runs) and what it holds (runs in progress). */
  credits_cost: number | null;
  credits_held: number;
  /** The owner-safe failure ({code, message}) of an EXCEPTION run, when the run records one. */
  error: { code?: string; message?: string } | null;
}

function pager(path: string, page: number, hasMore: boolean, extra = ''): SafeHtml {
  if (page <= 1 && !hasMore) return html``;
  return html`<div class="pager">
    <span>${page > 1 ? html`<a href="${path}?page=${page - 1}${extra}">← Newer</a>` : ''}</span>
    <span>${hasMore ? html`<a href="${path}?page=${page + 1}${extra}">Older →</a>` : ''}</span></div>`;
}

function failure(run: RunRow): SafeHtml | string {
  if (run.state !== 'EXCEPTION') return '';
  // One element: on phones the cell is a flex row, which would split the code and the message into columns.
  if (run.error?.message)
    return html`<span><span class="muted">${run.error.code ?? 'Failed'}:</span> ${run.error.message}</span>`;
  return html`<span class="muted">Failed</span>`;
}

function credits(run: RunRow): SafeHtml | string {
  if (run.credits_cost !== null) return String(run.credits_cost);
  return run.credits_held > 0
    ? html`<span class="muted" title="held while the run is in progress">${run.credits_held} held</span>`
    : '';
}

/**
 * The approval steps waiting on the user's runs (docs/runs.md, Approvals), each with its prompt and Approve /
 * Reject forms posting to /settings/runs/approvals (the same command as the API's).
 */
function waitingCard(csrf: string, waiting: WaitingApproval[]): SafeHtml {
  if (waiting.length === 0) return html``;
  const items = waiting.map(
    (step) => html`<div class="card" data-waiting-run="${step.run_uid}" data-waiting-step="${step.step_id}">
    <p><strong>${step.circuit_owner}/${step.circuit_name}</strong> <span class="muted">run <code title="${step.run_uid}">${step.run_uid.slice(0, 8)}…</code>, step <code>${step.step_id}</code></span></p>
    <p data-prompt>${step.prompt ?? ''}</p>
    ${step.expires_at ? html`<p class="muted">Decided by its timeout at ${time(step.expires_at)} if nobody decides before.</p>` : ''}
    <form method="post" action="/settings/runs/approvals">${csrfField(csrf)}
      <input type="hidden" name="run_uid" value="${step.run_uid}"><input type="hidden" name="step_id" value="${step.step_id}">
      <div class="field"><label for="comment-${step.run_uid}-${step.step_id}">Comment (optional)</label>
        <input type="text" id="comment-${step.run_uid}-${step.step_id}" name="comment" maxlength="2000"></div>
      <div class="row"><button type="submit" name="decision" value="approve">Approve</button>
        <button type="submit" name="decision" value="reject" class="danger">Reject</button></div>
    </form>
  </div>`,
  );
  return html`<section aria-labelledby="waiting-heading">
  <h2 id="waiting-heading">Waiting for your approval</h2>
  ${items}
</section>`;
}

/** The Runs page's filter, as its query string has it (docs/runs.md, Cancel and replay by filter). */
export interface RunsPageFilter {
  state: string | null;
  circuit_uid: string | null;
  tag: string | null;
}

/** The filter as query parameters (`state=…&circuit_uid=…&tag=…`), those set only. */
export function filterQuery(filter: RunsPageFilter): string {
  const params = new URLSearchParams();
  for (const name of ['state', 'circuit_uid', 'tag'] as const) if (filter[name]) params.set(name, filter[name]);
  return params.toString();
}

/** The filter as hidden fields of a form that acts on what it matches. */
function filterFields(filter: RunsPageFilter): SafeHtml {
  return html`${(['state', 'circuit_uid', 'tag'] as const).map((name) =>
    filter[name] ? html`<input type="hidden" name="${name}" value="${filter[name]}">` : '',
  )}`;
}

/**
 * The filter form (state, circuit, tag) and what the filter matches, with the forms that cancel the runs of it in
 * flight and replay those that ended: the same commands as POST /api/v1/users/circuit-runs/cancel and /replay.
 * Each form carries a fresh Idempotency-Key, so a form sent twice acts once.
 */
function filterCard(
  csrf: string,
  filter: RunsPageFilter,
  circuits: Array<{ uid: string; label: string }>,
  counts: { inFlight: number; ended: number },
  idempotencyKey: string,
): SafeHtml {
  const option = (value: string, label: string, selected: boolean) =>
    html`<option value="${value}" ${selected ? new SafeHtml('selected') : ''}>${label}</option>`;
  const described = [
    filter.state ? `state ${filter.state}` : '',
    filter.circuit_uid
      ? `circuit ${circuits.find((c) => c.uid === filter.circuit_uid)?.label ?? filter.circuit_uid}`
      : '',
    filter.tag ? `tag ${filter.tag}` : '',
  ].filter(Boolean);
  const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
  return html`<section class="card" aria-labelledby="filter-heading">
  <h2 id="filter-heading">Filter</h2>
  <form method="get" action="/settings/runs" class="row" data-run-filter>
    <div class="field"><label for="filter-state">State</label>
      <select id="filter-state" name="state">${option('', 'Any', !filter.state)}${RUN_STATES.map((s) => option(s, s, filter.state === s))}</select></div>
    <div class="field"><label for="filter-circuit">Circuit</label>
      <select id="filter-circuit" name="circuit_uid">${option('', 'Any', !filter.circuit_uid)}${circuits.map((c) => option(c.uid, c.label, filter.circuit_uid === c.uid))}</select></div>
    <div class="field"><label for="filter-tag">Tag</label>
      <input type="text" id="filter-tag" name="tag" value="${filter.tag ?? ''}" maxlength="64" pattern="[a-z0-9][a-z0-9_.:\-]{0,63}" placeholder="import-42"></div>
    <button type="submit" class="secondary">Filter</button>
  </form>
  <p data-matching>${described.length > 0 ? `Runs with ${described.join(', ')}` : 'All your runs'}: <strong data-in-flight>${counts.inFlight}</strong> in flight, <strong data-ended>${counts.ended}</strong> ended.</p>
  <div class="row">
    <form method="post" action="/settings/runs/cancel" class="inline">${csrfField(csrf)}${filterFields(filter)}
      <input type="hidden" name="idempotency_key" value="${idempotencyKey}:cancel">
      <button type="submit" class="danger" ${counts.inFlight === 0 ? new SafeHtml('disabled') : ''}>Cancel ${plural(counts.inFlight, 'run')} in flight</button></form>
    <form method="post" action="/settings/runs/replay" class="inline">${csrfField(csrf)}${filterFields(filter)}
      <input type="hidden" name="idempotency_key" value="${idempotencyKey}:replay">
      <button type="submit" class="secondary" ${counts.ended === 0 ? new SafeHtml('disabled') : ''}>Replay ${plural(counts.ended, 'ended run')}</button></form>
  </div>
  <p class="muted">At most 10,000 runs a click, the oldest first. Replays run each run's version and input again, as one batch.</p>
</section>`;
}

export function runsPage({
  user,
  csrf,
  runs,
  page,
  hasMore,
  filter: runFilter,
  circuits,
  counts,
  idempotencyKey,
  waiting = [],
  flash,
}: {
  user: User;
  csrf: string;
  runs: RunRow[];
  page: number;
  hasMore: boolean;
  filter: RunsPageFilter;
  circuits: Array<{ uid: string; label: string }>;
  counts: { inFlight: number; ended: number };
  idempotencyKey: string;
  waiting?: WaitingApproval[];
  flash?: Flash;
}): string {
  const state = runFilter.state;
  const others = filterQuery({ ...runFilter, state: null });
  const filter = (value: string | null, label: string) => {
    const query = [value ? `state=${value}` : '', others].filter(Boolean).join('&');
    return html`<a href="/settings/runs${query ? `?${query}` : ''}" ${state === value ? new SafeHtml('aria-current="page"') : ''}>${label}</a>`;
  };
  const rows = runs.map(
    (run) => html`<tr data-run-uid="${run.uid}">
    <td data-label="Started">${time(run.created_at)}</td>
    <td data-label="Circuit"><span title="${run.circuit_uid}">${run.circuit_owner}/${run.circuit_name}</span></td>
    <td data-label="State"><span class="state ${run.state}">${run.state}</span></td>
    <td data-label="Failure" data-failure>${failure(run)}</td>
    <td data-label="Credits" class="num">${credits(run)}</td>
    <td data-label="Uid"><span class="uid"><a href="/settings/runs/${run.uid}" data-run-link aria-label="Run ${run.uid}: details and output"><code>${run.uid.slice(0, 8)}…</code></a>
      <button type="button" class="secondary small" data-copy="${run.uid}" aria-label="Copy run uid ${run.uid}">Copy uid</button></span></td>
  </tr>`,
  );
  return sectionPage({
    section: 'runs',
    user,
    csrf,
    flash,
    lead: html`Every run you started, newest first: private and failed ones too. The API lists the same at <code>GET /api/v1/users/circuit-runs</code>.`,
    body: html`${waitingCard(csrf, waiting)}${filterCard(csrf, runFilter, circuits, counts, idempotencyKey)}<nav class="filters" aria-label="Filter by state">${filter(null, 'All')}${RUN_STATES.map((s) => filter(s, s.charAt(0) + s.slice(1).toLowerCase()))}</nav>
<section class="card">
  ${
    runs.length === 0
      ? html`<p class="empty">${page > 1 ? 'No more runs.' : 'No runs yet.'}</p>`
      : html`<table class="stack">
    <thead><tr><th>Started</th><th>Circuit</th><th>State</th><th>Failure</th><th class="num">Credits</th><th>Uid</th></tr></thead>
    <tbody>${rows}</tbody></table>`
  }
  ${pager('/settings/runs', page, hasMore, filterQuery(runFilter) ? `&${filterQuery(runFilter)}` : '')}
</section>`,
  });
}

/** The most of a run's output the detail page shows; the API answers the whole of it. */
export const SHOWN_JSON_CHARS = 65_536;

function jsonBlock(value: unknown, attribute: string): SafeHtml {
  if (value === undefined) return html`<p class="muted" ${new SafeHtml(attribute)}>None.</p>`;
  const text = JSON.stringify(value, null, 2) ?? 'null';
  const cut = text.length > SHOWN_JSON_CHARS;
  return html`<pre class="json" ${new SafeHtml(attribute)}>${cut ? text.slice(0, SHOWN_JSON_CHARS) : text}</pre>${
    cut
      ? html`<p class="hint">The first ${SHOWN_JSON_CHARS.toLocaleString('en')} characters of ${text.length.toLocaleString('en')}.</p>`
      : ''
  }`;
}

/**
 * One run of the user's (GET /settings/runs/{uid}): its row of the Runs page, then its output from `payload`,
 * the run as GET /api/v1/circuit-runs/{uid} shows it to its owner. Every value is escaped.
 */
export function runPage({
  user,
  csrf,
  run,
  payload,
}: {
  user: User;
  csrf: string;
  run: RunRow;
  payload: Record<string, unknown>;
}): string {
  const result = payload.result_blob as { output?: unknown } | undefined;
  const output =
    run.state === 'COMPLETED'
      ? jsonBlock(result?.output, 'data-run-output')
      : html`<p class="muted" data-run-output>${run.state === 'EXCEPTION' ? 'The run failed: it has no output.' : 'Not yet: the run has not ended.'}</p>`;
  return sectionPage({
    section: 'runs',
    user,
    csrf,
    lead: html`<a href="/settings/runs">← All runs</a> · the API answers the same at <code>GET /api/v1/circuit-runs/${run.uid}</code>.`,
    body: html`<section class="card" data-run="${run.uid}">
  <h2>${run.circuit_owner}/${run.circuit_name} <span class="state ${run.state}" data-run-state>${run.state}</span></h2>
  <dl class="facts">
    <dt>Run</dt><dd><span class="uid"><code>${run.uid}</code> <button type="button" class="secondary small" data-copy="${run.uid}">Copy uid</button></span></dd>
    <dt>Started</dt><dd>${time(run.created_at)}</dd>
    <dt>Ended</dt><dd>${time(run.ended_at, 'Not yet')}</dd>
    <dt>Credits</dt><dd data-run-credits>${credits(run) || '0'}</dd>
    ${run.state === 'EXCEPTION' ? html`<dt>Failure</dt><dd data-failure>${failure(run)}</dd>` : ''}
  </dl>
</section>
<section class="card"><h2>Output</h2>${output}</section>`,
  });
}

export function creditsPage({
  user,
  csrf,
  ledger,
  page,
  hasMore,
}: {
  user: User;
  csrf: string;
  ledger: CreditLedger[];
  page: number;
  hasMore: boolean;
}): string {
  const balance = user.creditBalance;
  const held = Number(user.credits_held ?? 0);
  const rows = ledger.map((row) => {
    const amount = Number(row.amount);
    return html`<tr data-ledger-uid="${row.uid}">
    <td data-label="When">${time(row.created_at)}</td>
    <td data-label="Kind">${row.kind === 'grant' ? 'Grant' : 'Run'}</td>
    <td data-label="Run">${row.run_uid ? html`<code title="${row.run_uid}">${row.run_uid.slice(0, 8)}…</code>` : ''}</td>
    <td data-label="Amount" class="num ${amount > 0 ? 'amount-pos' : ''}">${amount > 0 ? `+${amount}` : String(amount)}</td>
    <td data-label="Balance after" class="num">${Number(row.balance_after)}</td>
  </tr>`;
  });
  return sectionPage({
    section: 'credits',
    user,
    csrf,
    lead: html`A run costs 1 credit plus its steps' credits (llm steps by tokens). Credits are held while a run is in progress and charged when it ends.`,
    body: html`<section class="card balance" aria-label="Balance">
  <div><span class="muted">Balance</span><strong data-balance>${balance}</strong></div>
  <div><span class="muted">Held by runs in progress</span><strong data-held>${held}</strong></div>
  <div><span class="muted">Available</span><strong data-available>${Math.max(0, balance - held)}</strong></div>
</section>
<section class="card">
  <h2>Ledger</h2>
  ${
    ledger.length === 0
      ? html`<p class="empty">${page > 1 ? 'No more entries.' : 'No entries yet.'}</p>`
      : html`<table class="stack">
    <thead><tr><th>When</th><th>Kind</th><th>Run</th><th class="num">Amount</th><th class="num">Balance after</th></tr></thead>
    <tbody>${rows}</tbody></table>`
  }
  ${pager('/settings/credits', page, hasMore)}
</section>`,
  });
}
