import fs from 'node:fs';

/** Handlebars helpers a template may use; `log` and anything else that reaches outside is removed. */
export const TEMPLATE_HELPERS = ['each', 'if', 'unless', 'with', 'lookup'];

/** A CommonJS file evaluated inside the isolate with a `module`/`exports` shim, exposed as a global. */
function moduleAsGlobal(file: string, name: string): string {
  const code = fs.readFileSync(require.resolve(file), 'utf8');
  return `(function () { var module = { exports: {} }; var exports = module.exports;\n${code}\n;globalThis.${name} = module.exports; })();\n`;
}

/**
 * The isolate's own code: JSONata and Handlebars themselves, a restricted Handlebars environment,
 * and the three entry points the host calls (`__evaluate`, `__render`, `__check`). Arguments and
 * results cross as strings, so the host never shares an object with user logic.
 */
export function bootSource(): string {
  return `${moduleAsGlobal('jsonata/jsonata.js', 'jsonata')}${moduleAsGlobal('handlebars/dist/handlebars.js', 'Handlebars')}
(function () {
  'use strict';
  const HELPERS = ${JSON.stringify(TEMPLATE_HELPERS)};
  const INTERNAL = ['helperMissing', 'blockHelperMissing'];
  const hb = Handlebars.create();
  for (const name of Object.keys(hb.helpers)) if (!HELPERS.includes(name) && !INTERNAL.includes(name)) hb.unregisterHelper(name);
  for (const name of Object.keys(hb.decorators)) hb.unregisterDecorator(name);
  const parse = Handlebars.parse;
  const jsonataFn = jsonata;
  delete globalThis.Handlebars;
  delete globalThis.jsonata;

  const expressions = new Map();
  const templates = new Map();
  function remember(map, key, make) {
    let value = map.get(key);
    if (value === undefined) {
      value = make();
      if (map.size >= 500) map.delete(map.keys().next().value);
      map.set(key, value);
    }
    return value;
  }
  function bounded(text, max) {
    if (text.length > max) throw new Error('output is larger than ' + max + ' bytes');
    return text;
  }

  globalThis.__evaluate = async function (expression, scopeJson, max) {
    const compiled = remember(expressions, expression, () => jsonataFn(expression));
    let result;
    try {
      result = await compiled.evaluate(JSON.parse(scopeJson));
    } catch (error) {
      throw new Error(error && error.message ? String(error.message) : String(error));
    }
    const json = result === undefined ? 'null' : JSON.stringify(result);
    return bounded(json === undefined ? 'null' : json, max);
  };

  globalThis.__render = function (templatesJson, scopeJson, max) {
    const scope = JSON.parse(scopeJson);
    let size = 0;
    const out = JSON.parse(templatesJson).map((template) => {
      const render = remember(templates, template, () => hb.compile(template, { noEscape: true, strict: false, knownHelpers: { log: false } }));
      const text = render(scope);
      size += text.length;
      bounded({ length: size }, max);
      return text;
    });
    return JSON.stringify(out);
  };

  /** The first helper, partial or decorator a template uses that this environment does not offer. */
  function unavailable(node) {
    if (!node || typeof node !== 'object') return null;
    if (Array.isArray(node)) {
      for (const item of node) { const found = unavailable(item); if (found) return found; }
      return null;
    }
    if (node.type === 'PartialStatement' || node.type === 'PartialBlockStatement') return 'partials are not available';
    if (node.type === 'DecoratorBlock' || node.type === 'Decorator') return 'decorators are not available';
    if (node.type === 'MustacheStatement' || node.type === 'BlockStatement' || node.type === 'SubExpression') {
      const path = node.path;
      const calls = node.type !== 'MustacheStatement' || (node.params && node.params.length > 0) || node.hash;
      if (calls && path && path.type === 'PathExpression' && !path.data && path.parts.length === 1 && path.depth === 0
          && !HELPERS.includes(path.parts[0]) && (node.type !== 'BlockStatement' || path.parts[0] in Handlebars_builtins)) {
        return 'the helper ' + path.parts[0] + ' is not available (helpers: ' + HELPERS.join(', ') + ')';
      }
    }
    for (const key of ['body', 'program', 'inverse', 'params', 'hash', 'pairs', 'value', 'path']) {
      if (key in node) { const found = unavailable(node[key]); if (found) return found; }
    }
    return null;
  }
  const Handlebars_builtins = { log: true, helperMissing: true, blockHelperMissing: true };

  globalThis.__check = function (itemsJson) {
    const items = JSON.parse(itemsJson);
    for (let index = 0; index < items.length; index++) {
      const item = items[index];
      try {
        if (item.kind === 'template') {
          const problem = unavailable(parse(item.text));
          if (problem) return JSON.stringify({ index, message: problem, kind: 'unavailable' });
        } else {
          jsonataFn(item.text);
        }
      } catch (error) {
        const e = error || {};
        return JSON.stringify({ index, message: String(e.message || error), position: typeof e.position === 'number' ? e.position : undefined, kind: 'syntax' });
      }
    }
    return 'null';
  };
})();
`;
}
