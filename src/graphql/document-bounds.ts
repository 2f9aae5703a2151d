import { DocumentNode, Kind, parse, visit } from 'graphql';
import { AppError } from '../errors';
import { assertDocumentDepth } from './input-hygiene.rule';

/** Largest GraphQL document accepted, in characters: checked before anything reads it. */
export const MAX_DOCUMENT_CHARS = 64 * 1024;
/**
 * Fragment spreads and inline fragments in one document. Validation (OverlappingFieldsCanBeMerged)
 * compares the fields every spread brings in with every other: a chain of 200 fragments costs 0.1-0.5 s.
 */
export const MAX_FRAGMENT_SPREADS = 50;
/**
 * Times one response name may be selected in one selection set. Repeats are merged, so they add
 * nothing a client needs, and validation compares each pair: 500 `viewer { uid }` cost ~0.2 s.
 */
export const MAX_SAME_FIELD = 10;

const refuse = (message: string) => new AppError('BadClientData', message);

/**
 * Parses a GraphQL document within bounds that make its validation cheap, each checked before the
 * work it bounds: the size and the nesting depth before the parser reads it, the token count while
 * it parses (graphql-js stops at maxTokens), fragments and repeated fields before validation.
 * Throws BadClientData naming the bound, or graphql-js's GraphQLError for a syntax error.
 */
export function parseBounded(source: string, maxTokens: number): DocumentNode {
  if (source.length > MAX_DOCUMENT_CHARS)
    throw refuse(`The GraphQL document is longer than ${MAX_DOCUMENT_CHARS} characters`);
  assertDocumentDepth(source);
  let document: DocumentNode;
  try {
    document = parse(source, { maxTokens });
  } catch (error) {
    if (/contains more th(?:at|an) \d+ tokens/i.test((error as Error).message))
      throw refuse(`The GraphQL document has more than ${maxTokens} tokens (GRAPHQL_MAX_TOKENS)`);
    throw error;
  }
  assertDocumentShape(document);
  return document;
}

/** The fragment and repeated-field bounds of parseBounded, on a parsed document (one linear walk). */
export function assertDocumentShape(document: DocumentNode): void {
  let spreads = 0;
  visit(document, {
    FragmentSpread() {
      spreads++;
    },
    InlineFragment() {
      spreads++;
    },
    SelectionSet(node) {
      const seen = new Map<string, number>();
      for (const selection of node.selections) {
        if (selection.kind !== Kind.FIELD) continue;
        const name = (selection.alias ?? selection.name).value;
        const times = (seen.get(name) ?? 0) + 1;
        if (times > MAX_SAME_FIELD)
          throw refuse(`The GraphQL document selects "${name}" more than ${MAX_SAME_FIELD} times in one selection set`);
        seen.set(name, times);
      }
    },
  });
  if (spreads > MAX_FRAGMENT_SPREADS)
    throw refuse(`The GraphQL document has more than ${MAX_FRAGMENT_SPREADS} fragment spreads and inline fragments`);
}
