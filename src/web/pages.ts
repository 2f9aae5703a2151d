import type { ApiToken, User } from '../models';
import type { ApiTokenView } from '../views/api-token.view';
import type { Blob } from '../models/blobs';
import { formatBytes, html, SafeHtml, time } from './html';
import { TOKEN_SCOPES } from '../domain/token-scopes';
import { FAVICON_LINK } from '../http/favicon';

const FAVICON = new SafeHtml(FAVICON_LINK);

/** The signed-in sections, in tab order: each one's path under /settings and its title. */
const SECTIONS = {
  tokens: 'API Tokens',
  blobs: 'Blobs',
  webhooks: 'Webhooks',
  runs: 'Runs',
  credits: 'Credits',
  circuits: 'Circuits',
} as const;
export type Section = keyof typeof SECTIONS;
/** A message for the page; `code` is shown after it as copyable code (a new blob's uid). */
export interface Flash {
  kind: 'ok' | 'error';
  message: string;
  code?: string;
}

interface LayoutOptions {
  title: string;
  user?: User | null;
  section?: Section;
  csrf: string;
  body: SafeHtml;
}

export function layout({ title, user, section, csrf, body }: LayoutOptions): string {
  const tabs = (Object.keys(SECTIONS) as Section[]).map(
    (name) =>
      html`<a href="/settings/${name}" ${section === name ? new SafeHtml('aria-current="page"') : ''}>${SECTIONS[name]}</a>`,
  );
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Circuit Service settings</title>
${FAVICON}
<link rel="stylesheet" href="/settings/assets/settings.css">
<script src="/settings/assets/settings.js" defer></script>
</head>
<body>
<header class="topbar"><div class="topbar-inner">
  <a class="brand" href="/settings">Circuit Service <span>settings</span></a>
  ${
    user
      ? html`<nav class="tabs" aria-label="Settings sections">${tabs}</nav>
  <div class="who"><span>Signed in as <strong data-username>${user.username}</strong></span>
    <form class="inline" method="post" action="/settings/sign-out">${csrfField(csrf)}<button class="secondary small" type="submit">Sign out</button></form>
  </div>`
      : ''
  }
</div></header>
<main>
${body}
</main>
</body>
</html>
`.value;
}

/**
 * A signed-in section's page: its tab selected, its title as the heading, a lead paragraph, the
 * page's message if any, then `body`.
 */
export function sectionPage({
  section,
  user,
  csrf,
  lead,
  flash,
  body,
}: {
  section: Section;
  user: User;
  csrf: string;
  lead: SafeHtml;
  flash?: Flash;
  body: SafeHtml;
}): string {
  const title = SECTIONS[section];
  return layout({
    title,
    user,
    section,
    csrf,
    body: html`<h1>${title}</h1>
<p class="lead">${lead}</p>
${notice(flash)}
${body}`,
  });
}

export function csrfField(csrf: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${csrf}">`;
}

export function notice(flash: Flash | undefined): SafeHtml {
  if (!flash) return html``;
  return html`<div class="notice ${flash.kind}" role="${flash.kind === 'error' ? 'alert' : 'status'}">${flash.message}
    ${
      flash.code
        ? html`<div class="secret"><code data-flash-code>${flash.code}</code>
    <button type="button" class="small" data-copy="${flash.code}">Copy</button></div>`
        : ''
    }</div>`;
}

export function signInPage({
  csrf,
  username = '',
  error,
}: {
  csrf: string;
  username?: string;
  error?: string;
}): string {
  return layout({
    title: 'Sign in',
    csrf,
    body: html`<div class="narrow">
  <div class="card">
    <h1>Sign in</h1>
    <p class="lead">Manage your API tokens and blobs.</p>
    ${notice(error ? { kind: 'error', message: error } : undefined)}
    <form method="post" action="/settings/sign-in">
      ${csrfField(csrf)}
      <div class="field"><label for="username">Username</label>
        <input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${username}"></div>
      <div class="field"><label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required></div>
      <button type="submit">Sign in</button>
    </form>
  </div>
  <p class="hint">Accounts are created with <code>circuits user create --password</code>.</p>
</div>`,
  });
}

/** A token's limits in words: "full access" when it has none. */
function tokenLimits(t: ApiTokenView): string {
  const parts: string[] = [];
  if (t.scopes.length < TOKEN_SCOPES.length) parts.push(t.scopes.join(', '));
  if (t.circuitUids) parts.push(`${t.circuitUids.length} circuit${t.circuitUids.length === 1 ? '' : 's'}`);
  if (t.maxCreditsPerDay !== null) parts.push(`${t.maxCreditsPerDay} credits/day`);
  if (t.expiresAt) parts.push(`expires ${t.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`);
  return parts.length === 0 ? 'full access' : parts.join(' · ');
}

/**
 * Whether a listed token still works: revoked tokens are not listed, so a listed one is active or, past its
 * `expires_at`, expired (refused with 401 like a revoked one, but it is still the user's to revoke).
 */
function tokenStatus(t: ApiTokenView, now: Date): SafeHtml {
  return t.expiresAt && t.expiresAt.getTime() <= now.getTime()
    ? html`<span class="state expired">expired</span>`
    : html`<span class="state active">active</span>`;
}

export function tokensPage({
  user,
  csrf,
  tokens,
  flash,
  created,
  now = new Date(),
}: {
  user: User;
  csrf: string;
  tokens: ApiTokenView[];
  flash?: Flash;
  created?: { token: string; label: string };
  now?: Date;
}): string {
  const rows = tokens.map(
    (t) => html`<tr data-token-uid="${t.uid}">
    <td data-label="Label">${t.label || html`<span class="muted">(no label)</span>`}</td>
    <td data-label="Status" data-token-status>${tokenStatus(t, now)}</td>
    <td data-label="Created">${time(t.createdAt)}</td>
    <td data-label="Last used">${time(t.lastUsedAt)}</td>
    <td data-label="Limits" data-token-limits>${tokenLimits(t)}</td>
    <td data-label=""><a class="button danger small" href="/settings/tokens/${t.uid}/revoke" aria-label="Revoke ${t.label || 'token'}">Revoke</a></td>
  </tr>`,
  );
  return sectionPage({
    section: 'tokens',
    user,
    csrf,
    flash,
    lead: html`Send a token as <code>Authorization: Bearer &lt;token&gt;</code>. Treat it like a password.`,
    body: html`${
      created
        ? html`<div class="notice ok" role="status"><strong>Token “${created.label || 'unlabelled'}” created.</strong>
  Copy it now: it will not be shown again.
  <div class="secret"><code id="new-token" data-new-token>${created.token}</code>
  <button type="button" class="small" data-copy="${created.token}">Copy</button></div></div>`
        : ''
    }
<section class="card">
  <h2>Create a token</h2>
  <form method="post" action="/settings/tokens" class="form-grid" data-token-form>
    ${csrfField(csrf)}
    <div class="field"><label for="label">Label</label>
      <input id="label" name="label" type="text" maxlength="100" placeholder="e.g. laptop, CI" autocomplete="off"></div>
    <div class="field"><label for="expires_in_days">Expires in (days)</label>
      <input id="expires_in_days" name="expires_in_days" type="number" min="1" max="3650" placeholder="never"></div>
    <div class="field"><label for="circuit_uids">Only these circuits (uids)</label>
      <input id="circuit_uids" name="circuit_uids" type="text" placeholder="any circuit; separate uids with spaces or commas" autocomplete="off"></div>
    <div class="field"><label for="max_credits_per_day">Credits per UTC day</label>
      <input id="max_credits_per_day" name="max_credits_per_day" type="number" min="1" placeholder="no cap"></div>
    <fieldset class="field wide choices"><legend>Scopes <span class="muted">(none ticked: every scope)</span></legend>
      ${TOKEN_SCOPES.map((scope) => html`<label><input type="checkbox" name="scopes" value="${scope}"> <code>${scope}</code></label> `)}</fieldset>
    <div class="actions"><button type="submit">Create token</button></div>
  </form>
</section>
<section class="card">
  <h2>Your tokens</h2>
  ${
    tokens.length === 0
      ? html`<p class="empty">No tokens yet.</p>`
      : html`<table class="stack">
    <thead><tr><th>Label</th><th>Status</th><th>Created</th><th>Last used</th><th>Limits</th><th><span class="muted">Actions</span></th></tr></thead>
    <tbody>${rows}</tbody></table>`
  }
</section>`,
  });
}

/** The confirmation step before a token is revoked (revoking cannot be undone). */
export function revokeTokenPage({ user, csrf, token }: { user: User; csrf: string; token: ApiToken }): string {
  return layout({
    title: 'Revoke token',
    user,
    section: 'tokens',
    csrf,
    body: html`<div class="narrow"><div class="card">
  <h1>Revoke “${token.label || 'unlabelled'}”?</h1>
  <p>Requests that send this token will be refused (401) at once. This cannot be undone.</p>
  <p class="hint">Created ${time(token.created_at)} · last used ${time(token.last_used_at)}</p>
  <form method="post" action="/settings/tokens/${token.uid}/revoke" class="row">
    ${csrfField(csrf)}
    <button class="danger" type="submit">Revoke token</button>
    <a class="button secondary" href="/settings/tokens">Cancel</a>
  </form>
</div></div>`,
  });
}

export function blobsPage({
  user,
  csrf,
  blobs,
  flash,
  maxBytes,
  page,
  hasMore,
}: {
  user: User;
  csrf: string;
  blobs: Blob[];
  flash?: Flash;
  maxBytes: number;
  page: number;
  hasMore: boolean;
}): string {
  const rows = blobs.map(
    (b) => html`<tr data-blob-uid="${b.uid}">
    <td data-label="Name">${b.filename || html`<span class="muted">(unnamed)</span>`}</td>
    <td data-label="Uid"><span class="uid"><code>${b.uid.slice(0, 8)}…</code>
      <button type="button" class="secondary small" data-copy="${b.uid}" aria-label="Copy uid ${b.uid}">Copy uid</button></span></td>
    <td data-label="Size" class="num">${formatBytes(b.byteCount)}</td>
    <td data-label="Type">${b.mime_type ?? html`<span class="muted">unknown</span>`}</td>
    <td data-label="SHA-256"><code title="${b.hash}">${b.hash.slice(0, 12)}…</code></td>
    <td data-label="Reads" class="num">${b.readCount}</td>
    <td data-label="Uploaded">${time(b.created_at)}</td>
  </tr>`,
  );
  return sectionPage({
    section: 'blobs',
    user,
    csrf,
    flash,
    lead: html`Files that circuits can reference by uid (a <code>blob</code> step), and that anyone with the uid can download.`,
    body: html`<section class="card">
  <h2>Upload a file</h2>
  <form method="post" action="/settings/blobs" enctype="multipart/form-data" class="row">
    ${csrfField(csrf)}
    <div class="field"><label for="file">File</label><input id="file" name="file" type="file" required></div>
    <button type="submit">Upload</button>
  </form>
  <p class="hint">Up to ${formatBytes(maxBytes)}. Uploaded blobs cannot be deleted.</p>
</section>
<section class="card">
  <h2>Your blobs</h2>
  ${
    blobs.length === 0
      ? html`<p class="empty">${page > 1 ? 'No more blobs.' : 'No blobs yet.'}</p>`
      : html`<table class="stack">
    <thead><tr><th>Name</th><th>Uid</th><th class="num">Size</th><th>Type</th><th>SHA-256</th><th class="num">Reads</th><th>Uploaded</th></tr></thead>
    <tbody>${rows}</tbody></table>`
  }
  ${
    page > 1 || hasMore
      ? html`<div class="pager">
    <span>${page > 1 ? html`<a href="/settings/blobs?page=${page - 1}">← Newer</a>` : ''}</span>
    <span>${hasMore ? html`<a href="/settings/blobs?page=${page + 1}">Older →</a>` : ''}</span></div>`
      : ''
  }
</section>`,
  });
}

export function messagePage({
  title,
  message,
  user,
  csrf,
  link,
}: {
  title: string;
  message: string;
  user?: User | null;
  csrf: string;
  link?: { href: string; label: string };
}): string {
  return layout({
    title,
    user,
    csrf,
    body: html`<div class="narrow"><div class="card"><h1>${title}</h1><p>${message}</p>
      ${link ? html`<p><a href="${link.href}">${link.label}</a></p>` : ''}</div></div>`,
  });
}
