/**
 * Loads a command's implementation when that command runs, never when the program is defined:
 * `circuits --help` and every command that does not need them skip sequelize, the models, the job
 * queue and type-graphql (docs/cli.md has the figures; test/cli.operator.test.ts holds it).
 * `load` is a `require` of the implementation module, typed with `import type * as`.
 */
export function implementation<T>(load: () => T): T {
  // Type-graphql's decorators (the schedule presenter) read metadata when their module loads.
  require('reflect-metadata');
  return load();
}
