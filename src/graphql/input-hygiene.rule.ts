import { ASTNode, ASTVisitor, Kind, ValidationContext } from 'graphql';
import { AppError, badInput } from '../errors';
import { MAX_INPUT_DEPTH, textFlaw } from '../input-hygiene';

/** Names a literal by the argument (and input fields) it sits in: `queryCircuitAdaptor.input.name`. */
function literalPath(ancestors: readonly (ASTNode | readonly ASTNode[])[]): string {
  const names: string[] = [];
  for (const ancestor of ancestors) {
    if (Array.isArray(ancestor)) continue;
    const node = ancestor as ASTNode;
    if (node.kind === Kind.FIELD) names.push((node.alias ?? node.name).value);
    else if (node.kind === Kind.ARGUMENT || node.kind === Kind.OBJECT_FIELD) names.push(node.name.value);
    else if (node.kind === Kind.VARIABLE_DEFINITION) names.push(`$${node.variable.name.value}`);
    else if (node.kind === Kind.DIRECTIVE) names.push(`@${node.name.value}`);
  }
  return names.join('.') || 'document';
}

/**
 * The literal half of the input-hygiene pass (variables are checked with the request body):
 * a string literal anywhere in the document — String and ID arguments, JSON scalar literals,
 * default values — holding NUL or a lone surrogate is BadClientData naming where it is.
 */
export function InputHygieneRule(context: ValidationContext): ASTVisitor {
  return {
    StringValue(node, _key, parent, _path, ancestors) {
      const problem = textFlaw(node.value);
      if (problem)
        context.reportError(badInput(`${literalPath([...ancestors, ...(parent ? [parent] : [])])} ${problem}`));
    },
  };
}

/** Deepest nesting of `{`, `[` and `(` in a GraphQL document accepted before parsing it. */
export const MAX_DOCUMENT_DEPTH = MAX_INPUT_DEPTH;

/**
 * Rejects a document nested deeper than MAX_DOCUMENT_DEPTH before graphql-js parses it: its parser
 * recurses once per level and a 1 MiB body can nest 500,000 levels. One linear scan that skips
 * strings, block strings and comments.
 */
export function assertDocumentDepth(source: string): void {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (c === 0x23 /* # */) {
      while (i < source.length && source[i] !== '\n' && source[i] !== '\r') i++;
    } else if (c === 0x22 /* " */) {
      if (source.startsWith('"""', i)) {
        const end = source.indexOf('"""', i + 3);
        // An escaped \""" inside a block string does not end it.
        let close = end;
        while (close > 0 && source[close - 1] === '\\') close = source.indexOf('"""', close + 3);
        i = close < 0 ? source.length : close + 2;
      } else {
        for (i++; i < source.length && source[i] !== '"' && source[i] !== '\n'; i++) if (source[i] === '\\') i++;
      }
    } else if (c === 0x7b || c === 0x5b || c === 0x28) {
      if (++depth > MAX_DOCUMENT_DEPTH)
        throw new AppError('BadClientData', `The GraphQL document nests deeper than ${MAX_DOCUMENT_DEPTH} levels`);
    } else if (c === 0x7d || c === 0x5d || c === 0x29) {
      depth--;
    }
  }
}
