import type { AliasRoute, CircuitAlias, CircuitAliasHistory } from '../models';

/** The API view of one weighted route of an alias. */
export function aliasRouteView(route: AliasRoute) {
  return { versionUid: route.version_uid, weight: route.weight };
}

/** The API view of a version alias: GraphQL's CircuitAlias, REST's alias (fragment RestCircuitAlias) and the CLI's. */
export function aliasView(alias: CircuitAlias) {
  return {
    name: alias.name,
    circuitUid: alias.circuit_uid,
    routes: alias.routes.map(aliasRouteView),
    updatedAt: alias.updated_at,
  };
}

/** The API view of a route set an alias had before its current one. */
export function aliasHistoryView(entry: CircuitAliasHistory) {
  return { routes: entry.routes.map(aliasRouteView), updatedAt: entry.set_at, replacedAt: entry.replaced_at };
}
