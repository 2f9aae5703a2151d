import { badInput } from './errors';

/** Deepest nesting of arrays and objects accepted in any JSON input (docs/limits.md). */
export const MAX_INPUT_DEPTH = 64;

export interface InputFlaw {
  /** Where, e.g. `input.items[2].name`, or `body` for the value itself. */
  path: string;
  problem: string;
}

// U+0000, or a surrogate not part of a pair: PostgreSQL cannot store either in text or jsonb.
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const UNSAFE_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `text` cannot be accepted, or undefined when it can. */
export function textFlaw(text: string): string | undefined {
  const match = UNSAFE_TEXT.exec(text);
  if (!match) return undefined;
  return match[0] === '\u0000' ? 'contains a NUL character (U+0000)' : 'contains a lone surrogate (invalid Unicode)';
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const child = (path: string, key: string | number) =>
  typeof key === 'number'
    ? `${path}[${key}]`
    : IDENTIFIER.test(key)
      ? path
        ? `${path}.${key}`
        : key
      : `${path}[${JSON.stringify(key)}]`;

/**
 * The first flaw in a parsed JSON value: NUL or a lone surrogate in any string (keys included), or
 * nesting deeper than MAX_INPUT_DEPTH. Iterative and stopping at the depth limit, so a hostile
 * 500,000-deep value costs no stack and at most one pass over what was parsed.
 */
export function findInputFlaw(value: unknown, root = ''): InputFlaw | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: root, depth: 0 }];
  while (stack.length) {
    const { value: current, path, depth } = stack.pop()!;
    if (typeof current === 'string') {
      const problem = textFlaw(current);
      if (problem) return { path: path || 'value', problem };
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH)
      return { path: path || 'value', problem: `nests deeper than ${MAX_INPUT_DEPTH} levels` };
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--)
        stack.push({ value: current[i], path: child(path, i), depth: depth + 1 });
      continue;
    }
    const entries = Object.entries(current as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i];
      const keyProblem = textFlaw(key);
      if (keyProblem) return { path: path || 'value', problem: `has a key that ${keyProblem}` };
      stack.push({ value: item, path: child(path, key), depth: depth + 1 });
    }
  }
  return undefined;
}

/** Throws BadClientData naming the field when `value` has a flaw (see findInputFlaw). */
export function assertCleanInput(value: unknown, root = ''): void {
  const flaw = findInputFlaw(value, root);
  if (flaw) throw badInput(`${flaw.path} ${flaw.problem}`, { field: flaw.path });
}
