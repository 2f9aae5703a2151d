import crypto from 'node:crypto';
import { badInput } from '../errors';
import type { AliasRoute } from '../models/CircuitAlias';

/** An alias name, and the bounds of a route set. */
export const ALIAS_NAME = /^[a-z][a-z0-9-]{0,31}$/;
export const MIN_ROUTES = 1;
export const MAX_ROUTES = 5;
export const TOTAL_WEIGHT = 100;

/** 400 naming `name` unless it is an alias name. */
export function checkAliasName(name: string): void {
  if (!ALIAS_NAME.test(name)) {
    throw badInput(
      'name must be a lower-case letter followed by up to 31 lower-case letters, digits or dashes (^[a-z][a-z0-9-]{0,31}$)',
      { field: 'name' },
    );
  }
}

/**
 * The shape of a route set, checked before any version is looked up: 1–5 routes, each a version uid
 * (at most once) with a whole weight from 1 to 100, the weights adding up to 100. Errors name the
 * REST field (`routes[1].weight`). Whether the versions belong to the circuit is the command's check.
 */
export function checkRouteShape(routes: readonly { version_uid: unknown; weight: unknown }[]): AliasRoute[] {
  if (routes.length < MIN_ROUTES || routes.length > MAX_ROUTES) {
    throw badInput(`routes must hold ${MIN_ROUTES} to ${MAX_ROUTES} routes, got ${routes.length}`, { field: 'routes' });
  }
  const seen = new Map<string, number>();
  const checked = routes.map((route, i) => {
    const { version_uid: versionUid, weight } = route;
    if (typeof versionUid !== 'string' || versionUid === '')
      throw badInput(`routes[${i}].version_uid must be a version uid`, { field: `routes[${i}].version_uid` });
    if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 1 || weight > TOTAL_WEIGHT) {
      throw badInput(`routes[${i}].weight must be a whole number from 1 to ${TOTAL_WEIGHT}, got ${String(weight)}`, {
        field: `routes[${i}].weight`,
      });
    }
    const earlier = seen.get(versionUid);
    if (earlier !== undefined)
      throw badInput(`routes[${i}].version_uid repeats routes[${earlier}].version_uid`, {
        field: `routes[${i}].version_uid`,
      });
    seen.set(versionUid, i);
    return { version_uid: versionUid, weight };
  });
  const total = checked.reduce((sum, route) => sum + route.weight, 0);
  if (total !== TOTAL_WEIGHT)
    throw badInput(`routes weights must add up to ${TOTAL_WEIGHT}, got ${total}`, { field: 'routes' });
  return checked;
}

/**
 * Where in [0, 100) a query lands: derived from its Idempotency-Key when it has one (the first 48 bits
 * of the key's SHA-256, so the same key always lands on the same point), uniformly at random otherwise.
 */
export function drawPoint(idempotencyKey?: string | null): number {
  if (idempotencyKey === null || idempotencyKey === undefined) return Math.random() * TOTAL_WEIGHT;
  const digest = crypto.createHash('sha256').update(idempotencyKey).digest();
  return (digest.readUIntBE(0, 6) / 2 ** 48) * TOTAL_WEIGHT;
}

/** The route whose share of [0, 100) holds `point`: routes take consecutive shares of their weight, in order. */
export function routeAt(routes: readonly AliasRoute[], point: number): AliasRoute {
  let upTo = 0;
  for (const route of routes) {
    upTo += route.weight;
    if (point < upTo) return route;
  }
  return routes[routes.length - 1];
}

/** Two route sets are the same when they list the same versions with the same weights in the same order. */
export function sameRoutes(a: readonly AliasRoute[], b: readonly AliasRoute[]): boolean {
  return (
    a.length === b.length &&
    a.every((route, i) => route.version_uid === b[i].version_uid && route.weight === b[i].weight)
  );
}
