/**
 * Agenda makes a `debug` logger for each job it handles (`log.extend(…)`, about a dozen per run), and
 * `debug` asks the kernel whether stderr is a terminal for each one (two system calls each, ~26 per
 * run in a worker; measured with strace). Imported first by each entry point, before `debug` loads,
 * this answers once with the same answer, unless the operator set DEBUG_COLORS themselves.
 */
process.env.DEBUG_COLORS ??= process.stderr.isTTY ? 'yes' : 'no';

export {};
