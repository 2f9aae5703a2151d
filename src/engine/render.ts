import { DEFAULT_SANDBOX_LIMITS, SandboxError, type SandboxCall } from '../sandbox/sandbox';

/** Why a template failed, in words for the run's owner ("template: took longer than 1000 ms"). */
export function templateFailure(error: unknown): string {
  if (error instanceof SandboxError && error.reason !== 'user') return `template ${error.message}`;
  return `template failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
}

/** Renders one `{{input.name}}`-style template; no HTML escaping (outputs are data, not pages). */
export async function renderTemplate(template: string, scope: unknown, call: SandboxCall): Promise<string> {
  const [text] = await renderAll([template], scope, call);
  return text;
}

/**
 * Renders templates over one scope. When every one is only text and bare references (`Hello
 * {{input.name}}`) to text, numbers, booleans or nothing, they are filled in here, as Handlebars would,
 * within the same output bound; otherwise all go to the sandbox, in one call.
 */
export async function renderAll(templates: string[], scope: unknown, call: SandboxCall): Promise<string[]> {
  let budget = call.maxOutputBytes ?? DEFAULT_SANDBOX_LIMITS.maxOutputBytes!;
  const texts: string[] = [];
  for (const template of templates) {
    const text = renderPlain(template, scope, budget);
    // Not plain, or past the bound (the sandbox reports that as it always does).
    if (typeof text !== 'string') return call.sandbox.renderTemplates(templates, scope, call);
    budget -= text.length;
    texts.push(text);
  }
  return texts;
}

const REFERENCE = /\{\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}\}/g;
/** Names Handlebars reads as helpers or keywords, and names of the prototype chain. */
const NOT_PLAIN = new Set([
  'each',
  'if',
  'unless',
  'with',
  'lookup',
  'log',
  'this',
  'else',
  '__proto__',
  'constructor',
  'prototype',
]);

/**
 * The template rendered, when it is text and bare references only; undefined when Handlebars must;
 * null as soon as the text would pass `maxLength` (it is never built whole).
 */
function renderPlain(template: string, scope: unknown, maxLength: number): string | null | undefined {
  let out = '';
  let last = 0;
  for (const match of template.matchAll(REFERENCE)) {
    const text = template.slice(last, match.index);
    if (/[{\\]/.test(text)) return undefined;
    const value = referenced(match[1], scope);
    if (value === false) return undefined;
    if (out.length + text.length + value.length > maxLength) return null;
    out += text + value;
    last = match.index + match[0].length;
  }
  const tail = template.slice(last);
  if (/[{\\]/.test(tail)) return undefined;
  return out.length + tail.length > maxLength ? null : out + tail;
}

/** What `{{path}}` prints: a scalar as text, nothing as ''; false when only Handlebars can say. */
function referenced(path: string, scope: unknown): string | false {
  let node = scope;
  for (const key of path.split('.')) {
    if (NOT_PLAIN.has(key)) return false;
    if (node === null || node === undefined) return '';
    if (typeof node !== 'object' || Array.isArray(node)) return false;
    node = Object.hasOwn(node, key) ? (node as Record<string, unknown>)[key] : undefined;
  }
  if (node === null || node === undefined) return '';
  if (typeof node === 'string' || typeof node === 'number' || typeof node === 'boolean') return String(node);
  return false;
}

/** Renders every string leaf of a JSON value (the template fields that hold JSON, such as an http body), in one sandbox call. */
export async function renderLeaves(value: unknown, scope: unknown, call: SandboxCall): Promise<unknown> {
  const leaves = stringLeaves(value, '').map(([, text]) => text);
  const rendered = await renderAll(leaves, scope, call);
  let next = 0;
  const rebuild = (node: unknown): unknown => {
    if (typeof node === 'string') return rendered[next++];
    if (Array.isArray(node)) return node.map(rebuild);
    if (node && typeof node === 'object')
      return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, rebuild(item)]));
    return node;
  };
  return rebuild(value);
}

/** Every string leaf of a JSON value, with its path, in document order. */
export function stringLeaves(value: unknown, path: string): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((item, i) => stringLeaves(item, `${path}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, `${path}.${k}`));
  return [];
}
