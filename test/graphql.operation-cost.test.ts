import { parse, type GraphQLSchema } from 'graphql';
import { buildGraphqlSchema } from '../src/graphql/schema';
import { assertOperationCost } from '../src/graphql/operation-cost';

// The cost of a document no variable can change is remembered per parsed document; these prove that
// remembering changes no answer: a variable that sets a page's size is costed on every request, and a
// request whose variables do not coerce is refused alike the first time and afterwards.
let schema: GraphQLSchema;
beforeAll(async () => {
  schema = await buildGraphqlSchema();
});

const cost = (document: ReturnType<typeof parse>, variables: Record<string, unknown>, maxCost = 1000) =>
  assertOperationCost(schema, document, { variables, maxCost });

test("a page size given as a variable is costed with each request's value, for the same document", () => {
  const document = parse('query($uid: ID!, $n: Int) { circuitRun(uid: $uid) { events(limit: $n) { run { uid } } } }');
  const small = cost(document, { uid: 'x', n: 5 });
  expect(() => cost(document, { uid: 'x', n: 5000 })).toThrow(/^The operation costs \d+, more than the limit of 1000/);
  expect(cost(document, { uid: 'x', n: 5 })).toBe(small);
  const skipped = parse(
    'query($uid: ID!, $big: Boolean!) { circuitRun(uid: $uid) { events(limit: 5000) @include(if: $big) { run { uid } } uid } }',
  );
  expect(cost(skipped, { uid: 'x', big: false })).toBeLessThan(10);
  expect(() => cost(skipped, { uid: 'x', big: true })).toThrow(/more than the limit/);
});

test('a remembered cost still refuses variables that do not coerce, with the same message as the first time', () => {
  const document = parse('query($uid: ID!) { circuitRun(uid: $uid) { uid state } }');
  const refusal = () => {
    try {
      cost(document, {});
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  };
  const first = refusal();
  expect(first).toMatch(/^The operation cannot be costed: Variable "\$uid" of required type "ID!" was not provided/);
  expect(cost(document, { uid: 'x' })).toBeGreaterThan(0);
  expect(refusal()).toBe(first);
  expect(() => cost(document, { uid: 'x' }, 0)).toThrow(/more than the limit of 0/);
});
