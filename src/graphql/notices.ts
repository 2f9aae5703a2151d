import type { Circuit } from '../models';
import { addNotice, type AppContext } from './context';

/**
 * Deprecation notices follow from what a response is about, not from calls placed by hand: a
 * circuit named by the request (circuit.access) or presented as the owner of what is returned (a
 * run's circuit) is a subject of the response. When a root field has resolved, every subject that
 * is deprecated by then adds its notice and the `Deprecation` header (docs/api-conventions.md, Notices) — so a response to
 * the deprecate mutation itself carries it.
 */
const subjects = new WeakMap<AppContext, Set<Circuit>>();

export function aboutCircuit(ctx: AppContext, circuit: Circuit): void {
  let set = subjects.get(ctx);
  if (!set) subjects.set(ctx, (set = new Set()));
  set.add(circuit);
}

/** When a root field has resolved (root-fields.ts), every subject deprecated by then adds its notice. */
export function settleNotices(ctx: AppContext): void {
  for (const circuit of subjects.get(ctx) ?? []) {
    if (circuit.is_deprecated) {
      addNotice(
        ctx,
        { code: 'deprecated', message: `Circuit ${circuit.name} is deprecated and may be removed in the future` },
        circuit.deprecated_at,
      );
    }
  }
}
