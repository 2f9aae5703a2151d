import tty from 'node:tty';

/**
 * Agenda creates `debug` loggers per job; with src/debug-colors.ts loaded first (by every entry
 * point), creating one no longer asks the kernel whether stderr is a terminal.
 */

function loggersCreatedWith(env: string | undefined, loadDefaults: boolean): number {
  const saved = process.env.DEBUG_COLORS;
  const isatty = jest.spyOn(tty, 'isatty');
  try {
    if (env === undefined) delete process.env.DEBUG_COLORS;
    else process.env.DEBUG_COLORS = env;
    let calls = 0;
    jest.isolateModules(() => {
      if (loadDefaults) require('../src/debug-colors');
      const createDebug = require('debug') as (namespace: string) => { extend(name: string): unknown };
      isatty.mockClear(); // loading debug may look once; each logger made afterwards is what counts
      const log = createDebug('agenda:canary');
      for (let i = 0; i < 10; i++) log.extend(`job${i}`);
      calls = isatty.mock.calls.length;
    });
    return calls;
  } finally {
    isatty.mockRestore();
    if (saved === undefined) delete process.env.DEBUG_COLORS;
    else process.env.DEBUG_COLORS = saved;
  }
}

test("without the entry points' default, each debug logger checks whether stderr is a terminal (the cost it removes)", () => {
  expect(loggersCreatedWith(undefined, false)).toBeGreaterThanOrEqual(10);
});

test("with it, creating debug loggers makes no terminal check, and an operator's DEBUG_COLORS is kept", () => {
  expect(loggersCreatedWith(undefined, true)).toBe(0);
  const saved = process.env.DEBUG_COLORS;
  process.env.DEBUG_COLORS = 'yes';
  jest.isolateModules(() => {
    require('../src/debug-colors');
  });
  expect(process.env.DEBUG_COLORS).toBe('yes');
  if (saved === undefined) delete process.env.DEBUG_COLORS;
  else process.env.DEBUG_COLORS = saved;
});
