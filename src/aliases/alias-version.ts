import { CircuitAlias, type Circuit } from '../models';
import { notFound } from '../errors';
import { drawPoint, routeAt } from './alias-routes';

/**
 * `context.alias` of a query (docs/releases.md, Aliases): the version its route set draws for this query, by weight,
 * from the Idempotency-Key when one is sent (the same key always draws the same version), at random
 * otherwise. An unknown alias is 404. Routes name versions of the circuit (set-circuit-alias checks it).
 */
export async function versionOfAlias(circuit: Circuit, name: string, idempotencyKey: string | null): Promise<string> {
  const alias = await CircuitAlias.findOne({ where: { circuit_uid: circuit.uid, name }, attributes: ['routes'] });
  if (!alias) throw notFound('Alias');
  return routeAt(alias.routes, drawPoint(idempotencyKey)).version_uid;
}
