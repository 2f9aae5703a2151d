import { renderTemplates, SandboxError, type SandboxLimits } from '../sandbox/sandbox';

/** Why a template failed, in words for the run's owner ("template: took longer than 1000 ms"). */
export function templateFailure(error: unknown): string {
  if (error instanceof SandboxError && error.reason !== 'user') return `template ${error.message}`;
  return `template failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
}

/** Renders one `{{input.name}}`-style template; no HTML escaping (outputs are data, not pages). */
export async function renderTemplate(template: string, scope: unknown, limits: SandboxLimits): Promise<string> {
  const [text] = await renderAll([template], scope, limits);
  return text;
}

/** Renders templates over one scope, in one sandbox call. */
export async function renderAll(templates: string[], scope: unknown, limits: SandboxLimits): Promise<string[]> {
  return renderTemplates(templates, scope, limits);
}

/** Renders every string leaf of a JSON value (the *t* fields of DESIGN §4 that hold JSON), in one sandbox call. */
export async function renderLeaves(value: unknown, scope: unknown, limits: SandboxLimits): Promise<unknown> {
  const leaves = stringLeaves(value, '').map(([, text]) => text);
  const rendered = await renderAll(leaves, scope, limits);
  let next = 0;
  const rebuild = (node: unknown): unknown => {
    if (typeof node === 'string') return rendered[next++];
    if (Array.isArray(node)) return node.map(rebuild);
    if (node && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, rebuild(item)]));
    return node;
  };
  return rebuild(value);
}

/** Every string leaf of a JSON value, with its path, in document order. */
export function stringLeaves(value: unknown, path: string): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((item, i) => stringLeaves(item, `${path}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, `${path}.${k}`));
  return [];
}
