import type { RequestHandler, Router } from 'express';
import type { User } from '../../models';
import type { ApiServices } from '../../graphql/context';
import { rotateWebhookSecret, webhookSecretOf } from '../../webhooks/secret';
import { html } from '../html';
import { csrfField, type Flash, sectionPage } from '../pages';
import { csrfToken, save } from '../session';
import { requireCsrf, requireUser, signedInUser, takeFlash } from './guards';

function webhooksPage({
  user,
  csrf,
  secret,
  flash,
}: {
  user: User;
  csrf: string;
  secret: string;
  flash?: Flash;
}): string {
  return sectionPage({
    section: 'webhooks',
    user,
    csrf,
    flash,
    lead: html`Runs started with a <code>webhook</code> URL POST their events there, signed with this secret
  (Standard Webhooks: <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>).`,
    body: html`<section class="card">
  <h2>Signing secret</h2>
  <div class="secret"><code data-webhook-secret>${secret}</code>
  <button type="button" class="small" data-copy="${secret}">Copy</button></div>
  <p class="hint">Also at <code>GET /api/v1/webhooks/default/secret</code>.</p>
</section>
<section class="card">
  <h2>Rotate the secret</h2>
  <p>Deliveries from now on, retries included, are signed with the new secret; receivers still holding the old one will reject them.</p>
  <form method="post" action="/settings/webhooks/rotate">${csrfField(csrf)}
    <button class="danger" type="submit">Rotate secret</button></form>
</section>`,
  });
}

/** The Webhooks section: the signing secret, and rotating it. */
export function mountWebhooks(router: Router, services: ApiServices, form: RequestHandler): void {
  router.get('/webhooks', requireUser, async (req, res, next) => {
    try {
      const user = signedInUser(res);
      const secret = await webhookSecretOf(services.sequelize, user.uid);
      res.send(webhooksPage({ user, csrf: csrfToken(req), secret, flash: takeFlash(req) }));
    } catch (error) {
      next(error);
    }
  });

  router.post('/webhooks/rotate', requireUser, form, requireCsrf, async (req, res, next) => {
    try {
      await rotateWebhookSecret(services.sequelize, signedInUser(res).uid);
      req.session.flash = { kind: 'ok', message: 'Secret rotated. Give the new one to your receivers.' };
      await save(req);
      res.redirect(303, '/settings/webhooks');
    } catch (error) {
      next(error);
    }
  });
}
