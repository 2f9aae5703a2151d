import crypto from 'node:crypto';
import { MAX_FLOW_KEY_CHARS } from '../domain/definition';
import { badInput } from '../errors';

const REFERENCE = /\{\{\s*input((?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*\}\}/g;

/**
 * The key of a run under its version's `concurrency` or `debounce` (`where`): the template with each
 * `{{input.path}}` replaced by the input's value there (a string, number or boolean as text; nothing as '').
 * A value that is an object or an array is refused, 400 naming the input field: a key is made of scalars. A key
 * longer than MAX_FLOW_KEY_CHARS is bounded to `sha256:<hex>` of it (docs/runs.md, Concurrency keys), so a 10 KB
 * input value makes a key of 71 characters, as distinct as the value.
 */
export function renderFlowKey(
  template: string,
  input: Record<string, unknown>,
  where: string,
  inputField = 'input',
): string {
  const key = template.replace(REFERENCE, (_match, path: string) => {
    let node: unknown = input;
    for (const name of path.slice(1).split('.')) {
      if (node === null || node === undefined) break;
      node =
        typeof node === 'object' && !Array.isArray(node) && Object.hasOwn(node, name)
          ? (node as Record<string, unknown>)[name]
          : undefined;
    }
    if (node === null || node === undefined) return '';
    if (typeof node === 'object') {
      const field = `${inputField}${path}`;
      throw badInput(
        `${field} is ${Array.isArray(node) ? 'an array' : 'an object'}, and ${where} renders it: a key is made of strings, numbers and booleans`,
        { field },
      );
    }
    return String(node);
  });
  return key.length > MAX_FLOW_KEY_CHARS ? `sha256:${crypto.createHash('sha256').update(key).digest('hex')}` : key;
}

/**
 * A run's slot key under its version's `concurrency` (docs/runs.md, Concurrency keys): its circuit's uid, and with a
 * `key` template the rendered key after it, so that keys of different circuits never share slots.
 */
export function concurrencySlotKey(
  circuitUid: string,
  concurrency: { key?: string },
  input: Record<string, unknown>,
  inputField = 'input',
): string {
  return concurrency.key === undefined
    ? circuitUid
    : `${circuitUid}:${renderFlowKey(concurrency.key, input, 'concurrency.key', inputField)}`;
}
