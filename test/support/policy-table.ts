/** A policy table's cells (visibility → role → action → expected) as `test.each` rows, in the table's order. */
export function cellsOf<V extends string, R extends string, A extends string, E>(
  table: Record<V, Partial<Record<R, Record<A, E>>>>,
): [V, R, A, E][] {
  const cells: [V, R, A, E][] = [];
  for (const [visibility, roles] of Object.entries(table) as [V, Record<R, Record<A, E>>][]) {
    for (const [role, row] of Object.entries(roles) as [R, Record<A, E>][]) {
      for (const [action, expected] of Object.entries(row) as [A, E][])
        cells.push([visibility, role, action, expected]);
    }
  }
  return cells;
}
