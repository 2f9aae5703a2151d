import type { RequestHandler, Router } from 'express';
import { Op } from 'sequelize';
import { Circuit, CircuitAlias, CircuitAliasHistory, CircuitVersion, type AliasRoute, type User } from '../../models';
import { setCircuitAlias } from '../../commands/set-circuit-alias';
import { AppError } from '../../errors';
import { isUid } from '../../ids';
import { circuitPermits } from '../../policies/circuit.policy';
import type { ApiServices } from '../../graphql/context';
import { html, type SafeHtml, time } from '../html';
import { csrfField, type Flash, sectionPage } from '../pages';
import { csrfToken, save } from '../session';
import { requireCsrf, requireUser, signedInUser, takeFlash } from './guards';

/** History entries shown per alias (the API pages through all of them). */
const HISTORY_SHOWN = 10;

interface AliasView {
  alias: CircuitAlias;
  history: CircuitAliasHistory[];
}
interface CircuitView {
  circuit: Circuit;
  numbers: Map<string, number>;
  aliases: AliasView[];
}

/** The signed-in user's circuits, newest first, with their aliases and each alias's latest history. */
async function circuitViews(user: User): Promise<CircuitView[]> {
  const circuits = await Circuit.findAll({
    where: { owner_uid: user.uid },
    order: [
      ['created_at', 'DESC'],
      ['uid', 'ASC'],
    ],
    limit: 100,
  });
  const uids = circuits.map((c) => c.uid);
  const [versions, aliases, history] = await Promise.all([
    CircuitVersion.findAll({ where: { circuit_uid: { [Op.in]: uids } }, attributes: ['uid', 'circuit_uid', 'number'] }),
    CircuitAlias.findAll({ where: { circuit_uid: { [Op.in]: uids } }, order: [['name', 'ASC']] }),
    CircuitAliasHistory.findAll({
      where: { circuit_uid: { [Op.in]: uids } },
      order: [
        ['replaced_at', 'DESC'],
        ['uid', 'ASC'],
      ],
    }),
  ]);
  return circuits.map((circuit) => ({
    circuit,
    numbers: new Map(versions.filter((v) => v.circuit_uid === circuit.uid).map((v) => [v.uid, v.number])),
    aliases: aliases
      .filter((a) => a.circuit_uid === circuit.uid)
      .map((alias) => ({
        alias,
        history: history.filter((h) => h.circuit_uid === circuit.uid && h.name === alias.name).slice(0, HISTORY_SHOWN),
      })),
  }));
}

function routesText(routes: AliasRoute[], numbers: Map<string, number>): SafeHtml {
  return html`${routes.map((route, i) => html`${i > 0 ? ', ' : ''}<span title="${route.version_uid}">v${numbers.get(route.version_uid) ?? '?'}</span> ${route.weight}%`)}`;
}

function aliasCard(view: CircuitView, { alias, history }: AliasView, csrf: string): SafeHtml {
  const rows = history.map(
    (entry) => html`<tr data-history-uid="${entry.uid}">
    <td data-label="Routes">${routesText(entry.routes, view.numbers)}</td>
    <td data-label="Set">${time(entry.set_at)}</td>
    <td data-label="Replaced">${time(entry.replaced_at)}</td>
    <td data-label=""><form class="inline" method="post" action="/settings/circuits/aliases/rollback">${csrfField(csrf)}
      <input type="hidden" name="circuit_uid" value="${view.circuit.uid}">
      <input type="hidden" name="name" value="${alias.name}">
      <input type="hidden" name="history_uid" value="${entry.uid}">
      <button class="secondary small" type="submit" aria-label="Roll ${alias.name} back to these routes">Roll back to this</button></form></td>
  </tr>`,
  );
  return html`<div class="alias" data-alias="${alias.name}">
  <h3><code>${alias.name}</code> → <span data-alias-routes>${routesText(alias.routes, view.numbers)}</span> <span class="hint">since ${time(alias.updated_at)}</span></h3>
  ${
    history.length === 0
      ? html`<p class="empty">No earlier routes.</p>`
      : html`<table class="stack">
    <thead><tr><th>Earlier routes</th><th>Set</th><th>Replaced</th><th><span class="muted">Actions</span></th></tr></thead>
    <tbody>${rows}</tbody></table>`
  }
</div>`;
}

function circuitsPage({
  user,
  csrf,
  circuits,
  flash,
}: {
  user: User;
  csrf: string;
  circuits: CircuitView[];
  flash?: Flash;
}): string {
  const cards = circuits.map(
    (view) => html`<section class="card" data-circuit-uid="${view.circuit.uid}">
  <h2>${view.circuit.name}</h2>
  <p class="hint">${view.numbers.size} version${view.numbers.size === 1 ? '' : 's'}${view.circuit.is_private ? ' · private' : ''}</p>
  ${view.aliases.length === 0 ? html`<p class="empty">No aliases.</p>` : view.aliases.map((a) => aliasCard(view, a, csrf))}
</section>`,
  );
  return sectionPage({
    section: 'circuits',
    user,
    csrf,
    flash,
    lead: html`Your circuits and their version aliases. A query that sends <code>context.alias</code> runs a version drawn by
  the alias's weights; set them with <code>PUT /api/v1/circuits/{uid}/aliases/{name}</code>. Rolling back puts an earlier route set again.`,
    body:
      circuits.length === 0
        ? html`<section class="card"><p class="empty">No circuits yet.</p></section>`
        : html`${cards}`,
  });
}

const field = (body: unknown, name: string): string => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

/**
 * A rollback from the page: the same command as a PUT of the earlier route set, for the signed-in
 * user's own circuits only (circuit policy `manage`); someone else's circuit is answered as no circuit.
 */
async function rollBack(services: ApiServices, user: User, body: unknown): Promise<Flash> {
  const circuitUid = field(body, 'circuit_uid');
  const name = field(body, 'name');
  const historyUid = field(body, 'history_uid');
  const circuit = isUid(circuitUid) ? await Circuit.findByPk(circuitUid) : null;
  if (!circuit || !circuitPermits(user, circuit, 'manage'))
    return { kind: 'error', message: 'There is no such circuit of yours.' };
  const entry = isUid(historyUid)
    ? await CircuitAliasHistory.findOne({ where: { uid: historyUid, circuit_uid: circuit.uid, name } })
    : null;
  if (!entry) return { kind: 'error', message: `Alias ${name} has no such earlier route set.` };
  try {
    await setCircuitAlias(services.sequelize, circuit, name, entry.routes);
    return { kind: 'ok', message: `Alias ${name} of ${circuit.name} is back on the routes it had then.` };
  } catch (error) {
    if (error instanceof AppError && error.code !== 'Internal') return { kind: 'error', message: error.message };
    throw error;
  }
}

/** The Circuits section: the user's circuits, their aliases and alias history, and rolling an alias back. */
export function mountCircuits(router: Router, services: ApiServices, form: RequestHandler): void {
  router.get('/circuits', requireUser, async (req, res, next) => {
    try {
      const user = signedInUser(res);
      res.send(circuitsPage({ user, csrf: csrfToken(req), circuits: await circuitViews(user), flash: takeFlash(req) }));
    } catch (error) {
      next(error);
    }
  });

  router.post('/circuits/aliases/rollback', requireUser, form, requireCsrf, async (req, res, next) => {
    try {
      req.session.flash = await rollBack(services, signedInUser(res), req.body);
      await save(req);
      res.redirect(303, '/settings/circuits');
    } catch (error) {
      next(error);
    }
  });
}
