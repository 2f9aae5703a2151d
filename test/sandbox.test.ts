import { Sandbox, SandboxError, type SandboxLimits } from '../src/sandbox/sandbox';
import { evaluateExpression } from '../src/engine/expression';
import { renderAll } from '../src/engine/render';

const sandbox = new Sandbox();
const limits = { sandbox, cpuMs: 300, memoryMb: 32 };
afterAll(() => sandbox.close());
const evaluateJsonata = (expression: string, scope: unknown, l: SandboxLimits) =>
  sandbox.evaluateJsonata(expression, scope, l);
const renderTemplates = (templates: string[], scope: unknown, l: SandboxLimits) =>
  sandbox.renderTemplates(templates, scope, l);
const checkSyntax = (items: Parameters<Sandbox['checkSyntax']>[0], l: SandboxLimits) => sandbox.checkSyntax(items, l);

/** Runs `work` while a 5 ms timer ticks; returns the longest gap the event loop showed. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ gap: number; outcome: T | Error }> {
  let gap = 0;
  let last = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, 5);
  let outcome: T | Error;
  try {
    outcome = await work();
  } catch (error) {
    outcome = error as Error;
  } finally {
    clearInterval(timer);
  }
  return { gap, outcome };
}

test('JSONata and templates evaluate to plain JSON and text', async () => {
  expect(await evaluateJsonata('$uppercase(input.name)', { input: { name: 'ada' } }, limits)).toBe('ADA');
  expect(await evaluateJsonata('[1..3].{"n": $}', {}, limits)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  expect(await evaluateJsonata('nothing', {}, limits)).toBeNull();
  expect(
    await renderTemplates(
      [
        'Hi {{input.name}}',
        '{{#each input.xs}}[{{this}}]{{/each}}',
        '{{lookup input.m "k"}}{{#if input.name}}!{{/if}}',
      ],
      { input: { name: 'A', xs: [1, 2], m: { k: 'v' } } },
      limits,
    ),
  ).toEqual(['Hi A', '[1][2]', 'v!']);
});

test('a bare field path answered without the sandbox means what JSONata says it means', async () => {
  const scope = {
    input: {
      name: 'ada',
      n: 0,
      nothing: null,
      flag: false,
      obj: { xs: [1, [2, 3]], deep: { k: 'v' } },
      and: 1,
      list: [{ a: 1 }, { a: 2 }],
      one: [7],
    },
    steps: { shout: { output: 'HELLO' }, rows: { output: [[1], [2]] }, obj: { output: { a: [1, { b: 2 }] } } },
  };
  const paths = [
    'steps.shout.output',
    'steps.rows.output',
    'steps.obj.output',
    'input.name',
    'input.n',
    'input.nothing',
    'input.flag',
    'input.obj',
    'input.obj.deep.k',
    'input.obj.xs',
    'input.and',
    'input.list.a',
    'input.one',
    'input.missing',
    'missing.path',
    'input',
    'steps.shout.output.x',
  ];
  for (const path of paths)
    expect([path, await evaluateExpression(path, scope, limits)]).toEqual([
      path,
      await evaluateJsonata(path, scope, limits),
    ]);
});

test('$uppercase, $lowercase and $trim of a bare field path, answered without the sandbox, mean what JSONata says they mean', async () => {
  const texts = [
    'ada',
    'Straße',
    'ǅemal',
    'İstanbul ı',
    'ﬁne',
    'ŉ',
    'Ω and ω',
    '😀 x',
    '',
    ' \t a \n\r  b  ',
    '\u00a0nbsp\u00a0',
    '\u2003em space\u2003',
    'a\u0307',
    'nul\u0000 in',
    '\ud800 lone high',
    'lone low \udfff',
    'ǈ'.repeat(10_000),
  ];
  const scope = {
    input: { texts, n: 5, nothing: null, list: ['a', 'b'], obj: { s: 'x' } },
    steps: { greet: { output: 'Hello ada' } },
  };
  const expressions = [
    ...texts.flatMap((_, i) => [`$uppercase(input.t${i})`, `$lowercase(input.t${i})`, `$trim(input.t${i})`]),
    '$uppercase(steps.greet.output)',
    '$uppercase( steps.greet.output )',
    '$trim(input.n)',
    '$uppercase(input.nothing)',
    '$lowercase(input.missing)',
    '$uppercase(input.list)',
    '$uppercase(input.obj)',
    '$uppercase(input.obj.s)',
    '$uppercase(true)',
    '$uppercase(steps.greet.output) & "!"',
  ];
  Object.assign(scope.input, Object.fromEntries(texts.map((text, i) => [`t${i}`, text])));
  const outcome = (promise: Promise<unknown>) =>
    promise.then(
      (value) => ({ value }),
      (error: Error) => ({ error: error.message }),
    );
  for (const expression of expressions) {
    const direct = await outcome(evaluateJsonata(expression, scope, limits));
    expect([expression, await outcome(evaluateExpression(expression, scope, limits))]).toEqual([
      expression,
      'error' in direct ? { error: `JSONata: ${direct.error}` } : direct,
    ]);
  }
  // Answered without a sandbox call: with 1 MB no isolate can even start.
  const noSandbox = { sandbox, cpuMs: 300, memoryMb: 1 };
  await expect(evaluateJsonata('$uppercase(steps.greet.output)', scope, noSandbox)).rejects.toThrow();
  expect(await evaluateExpression('$uppercase(steps.greet.output)', scope, noSandbox)).toBe('HELLO ADA');
  // Past the output bound the sandbox answers, and refuses as it always does ('ß' doubles when upper-cased).
  const big = { input: { s: 'ß'.repeat(600) } };
  expect(await evaluateExpression('$lowercase(input.s)', big, { ...limits, maxOutputBytes: 1000 })).toHaveLength(600);
  await expect(evaluateExpression('$uppercase(input.s)', big, { ...limits, maxOutputBytes: 1000 })).rejects.toThrow(
    'JSONata: output is larger than 1000 bytes',
  );
});

test('templates of text and bare references rendered without the sandbox read exactly as Handlebars renders them', async () => {
  const scope = {
    input: {
      name: 'ada',
      n: 0,
      big: 1e21,
      neg: -1.5,
      nothing: null,
      no: false,
      yes: true,
      obj: { k: 'v', deep: { x: 1 } },
      xs: [1, 2],
      s: 'a}}b',
      each: 'e',
    },
    steps: { greet: { output: 'Hello ada' } },
  };
  const templates = [
    'Hello {{input.name}}!',
    '{{input.n}}/{{input.big}}/{{input.neg}}',
    '[{{input.nothing}}][{{input.missing}}][{{input.missing.deeper}}]',
    '{{input.no}} {{input.yes}}',
    '{{input.obj.k}}{{input.obj.deep.x}}',
    '{{input.obj}}',
    '{{input.xs}}',
    '{{input.s}} and }} text',
    '{{steps.greet.output}}',
    '{{input.name.length}}',
    '{{input.each}}',
    '{{ input.name }}',
    '\\{{input.name}}',
    'plain text',
    '',
    '{{input.obj.deep}}',
    '{{#if input.yes}}y{{/if}}',
  ];
  for (const template of templates) {
    expect([template, await renderAll([template], scope, limits)]).toEqual([
      template,
      await renderTemplates([template], scope, limits),
    ]);
  }
  expect(await renderAll(templates, scope, limits)).toEqual(await renderTemplates(templates, scope, limits));
});

test('plain templates keep the output bound: a text past it is refused as the sandbox refuses it, never built whole', async () => {
  const scope = { input: { x: 'x'.repeat(1024 * 1024) } };
  const many = '{{input.x}}'.repeat(10_000);
  await expect(renderAll([many], scope, { ...limits, maxOutputBytes: 4 * 1024 * 1024 })).rejects.toThrow(SandboxError);
});

test('a memory bomb ($pad) fails with a memory error; the process and the sandbox go on', async () => {
  // A generous time limit: on a loaded machine the allocation could otherwise outlast 300 ms of wall time.
  const { outcome } = await longestStall(() =>
    evaluateJsonata('$length($pad("", 300000000))', {}, { ...limits, cpuMs: 10_000 }),
  );
  expect(outcome).toBeInstanceOf(SandboxError);
  expect((outcome as SandboxError).reason).toBe('memory');
  expect((outcome as Error).message).toBe('used more than 32 MB of memory');
  expect(await evaluateJsonata('1 + 1', {}, limits)).toBe(2);
});

/** A limit long beside scheduling noise on a loaded machine: a loop that ran the work itself would stall at least this long. */
const slow = { ...limits, cpuMs: 2_000 };

test('a catastrophic JSONata regex stops at the time limit without stalling the event loop', async () => {
  const { gap, outcome } = await longestStall(() =>
    evaluateJsonata('$match(input.s, /^(a+)+$/)', { input: { s: `${'a'.repeat(31)}!` } }, slow),
  );
  expect((outcome as SandboxError).reason).toBe('timeout');
  expect((outcome as Error).message).toBe('took longer than 2000 ms');
  expect(gap).toBeLessThan(slow.cpuMs / 2);
});

test('nested {{#each}} over 100 items stops at a limit; the event loop stays free', async () => {
  const xs = Array.from({ length: 100 }, (_, i) => i);
  const template =
    '{{#each input.xs}}{{#each ../input.xs}}{{#each ../../input.xs}}{{#each ../../../input.xs}}abcdefgh{{/each}}{{/each}}{{/each}}{{/each}}';
  const { gap, outcome } = await longestStall(() => renderTemplates([template], { input: { xs } }, slow));
  expect(outcome).toBeInstanceOf(SandboxError);
  expect(['timeout', 'memory']).toContain((outcome as SandboxError).reason);
  expect(gap).toBeLessThan(slow.cpuMs / 2);
});

test('output larger than the limit fails instead of reaching the host', async () => {
  await expect(evaluateJsonata('$pad("", 5000)', {}, { ...limits, maxOutputBytes: 1000 })).rejects.toThrow(
    'output is larger than 1000 bytes',
  );
  await expect(
    renderTemplates(
      ['{{input.s}}', '{{input.s}}'],
      { input: { s: 'x'.repeat(600) } },
      { ...limits, maxOutputBytes: 1000 },
    ),
  ).rejects.toThrow('output is larger than 1000 bytes');
});

test('runaway recursion and JSONata errors are user errors with their message', async () => {
  await expect(evaluateJsonata('($f := function($x){ $f($x) }; $f(1))', {}, limits)).rejects.toThrow(SandboxError);
  await expect(evaluateJsonata('$error("boom")', {}, limits)).rejects.toThrow('boom');
});

test('templates have no log helper, partials or decorators; the built-in block helpers remain', async () => {
  await expect(renderTemplates(['{{log "secret"}}'], {}, limits)).rejects.toThrow(/log/);
  expect(
    await checkSyntax(
      [
        {
          kind: 'template',
          text: '{{#with input}}{{#unless x}}{{#each y}}{{lookup . 0}}{{/each}}{{/unless}}{{/with}}{{#input.items}}{{name}}{{/input.items}}',
        },
      ],
      limits,
    ),
  ).toBeNull();
  expect(
    await checkSyntax(
      [
        { kind: 'template', text: 'ok' },
        { kind: 'template', text: '{{log "x"}}' },
      ],
      limits,
    ),
  ).toMatchObject({ index: 1, kind: 'unavailable', message: expect.stringContaining('helper log is not available') });
  expect(await checkSyntax([{ kind: 'template', text: '{{> partial}}' }], limits)).toMatchObject({
    kind: 'unavailable',
    message: 'partials are not available',
  });
  expect(await checkSyntax([{ kind: 'template', text: '{{#if}}' }], limits)).toMatchObject({
    index: 0,
    kind: 'syntax',
  });
  expect(await checkSyntax([{ kind: 'jsonata', text: '$uppercase(' }], limits)).toMatchObject({
    index: 0,
    kind: 'syntax',
    position: expect.any(Number),
  });
});

test('many concurrent calls share the pool and all finish', async () => {
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) => evaluateJsonata('input.n * 2', { input: { n: i } }, limits)),
  );
  expect(results).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
});
