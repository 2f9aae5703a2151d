import Handlebars from 'handlebars';
import { badInput } from '../errors';

const hbs = Handlebars.create();
const compiled = new Map<string, HandlebarsTemplateDelegate>();

/** Throws BadClientData naming `where` when a template does not parse. */
export function checkTemplate(template: string, where: string): void {
  try {
    hbs.parse(template);
  } catch (error) {
    throw badInput(`${where}: template does not parse: ${(error as Error).message.split('\n')[0]}`);
  }
}

/** Renders `{{input.name}}`-style templates; no HTML escaping (outputs are data, not pages). */
export function renderTemplate(template: string, scope: unknown): string {
  let fn = compiled.get(template);
  if (!fn) {
    fn = hbs.compile(template, { noEscape: true, strict: false });
    if (compiled.size > 5000) compiled.clear();
    compiled.set(template, fn);
  }
  return fn(scope);
}

/** Renders every string leaf of a JSON value (the *t* fields of DESIGN §4 that hold JSON). */
export function renderLeaves(value: unknown, scope: unknown): unknown {
  if (typeof value === 'string') return renderTemplate(value, scope);
  if (Array.isArray(value)) return value.map((item) => renderLeaves(item, scope));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renderLeaves(item, scope)]));
  }
  return value;
}

/** Every string leaf of a JSON value, with its path, for validation. */
export function stringLeaves(value: unknown, path: string): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((item, i) => stringLeaves(item, `${path}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, `${path}.${k}`));
  return [];
}
