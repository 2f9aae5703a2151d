import type { User } from '../../models';
import type { AuthorizationRequest } from '../../oauth/authorization-request';
import { isMetadataDocumentId } from '../../oauth/clients';
import { html } from '../html';
import { csrfField, layout } from '../pages';

/** What each scope lets the application do, in the user's words. */
const SCOPE_TEXT: Record<string, string> = {
  'runs:read': 'read your runs and their results',
  'runs:write': 'run circuits (spending your credits), cancel and replay runs',
  'circuits:read': 'see your circuits and the ones you starred',
  'circuits:write': 'create and change circuits, versions and aliases',
  'boards:write': 'create and change boards',
  'webhooks:write': 'read your webhook secret and send runs to webhooks',
  'schedules:write': 'create and change schedules',
};

function redirectHost(uri: string): string {
  const url = new URL(uri);
  return url.host || url.protocol;
}

/** The consent page: who asks (its name is its own claim; the hosts are facts), for what, Approve or Deny. */
export function consentPage({
  user,
  csrf,
  requestId,
  request,
}: {
  user: User;
  csrf: string;
  requestId: string;
  request: AuthorizationRequest;
}): string {
  const { client } = request;
  const origin = isMetadataDocumentId(client.clientId) ? new URL(client.clientId).host : null;
  return layout({
    title: 'Connect an application',
    user,
    csrf,
    body: html`<div class="narrow"><div class="card" data-oauth-consent>
  <h1>Connect <span data-client-name>${client.name}</span>?</h1>
  <p class="lead">An application asks to use Circuit Service as <strong>${user.username}</strong>.</p>
  <dl>
    <dt>Application</dt><dd>${client.name}${origin ? html` <span class="muted">(described by ${origin})</span>` : ''}</dd>
    <dt>Sends you back to</dt><dd><code data-redirect-host>${redirectHost(request.redirectUri)}</code></dd>
    <dt>It may</dt><dd><ul data-scopes>${request.scopes.map(
      (scope) => html`<li><code>${scope}</code>: ${SCOPE_TEXT[scope] ?? scope}</li>`,
    )}</ul></dd>
  </dl>
  <p class="hint">Approving creates an API token named after the application, valid for 30 days. You can revoke it at any time under API Tokens.</p>
  <form method="post" action="/settings/oauth/authorize" class="row">
    ${csrfField(csrf)}
    <input type="hidden" name="request" value="${requestId}">
    <button type="submit" name="decision" value="approve">Approve</button>
    <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
  </form>
</div></div>`,
  });
}
