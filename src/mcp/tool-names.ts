/**
 * MCP tool names for circuits (docs/mcp.md): `<username>__<circuit_name>`, every character outside
 * `[A-Za-z0-9_-]` replaced by `_`, at most TOOL_NAME_MAX characters (the SDK warns past 128, the
 * length the MCP spec recommends). Two circuits whose names sanitize alike (`a.b` and `a_b`) are told
 * apart by a `_2`, `_3`… suffix in list order, so the caller's list and a call resolve the same way.
 */

export const TOOL_NAME_MAX = 128;

export function baseToolName(username: string, circuitName: string): string {
  return `${username}__${circuitName}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, TOOL_NAME_MAX);
}

/** One unique name per entry, in the entries' order. */
export function toolNames(entries: readonly { username: string; circuitName: string }[]): string[] {
  const taken = new Set<string>();
  return entries.map(({ username, circuitName }) => {
    const base = baseToolName(username, circuitName);
    let name = base;
    for (let n = 2; taken.has(name); n++) {
      const suffix = `_${n}`;
      name = `${base.slice(0, TOOL_NAME_MAX - suffix.length)}${suffix}`;
    }
    taken.add(name);
    return name;
  });
}
