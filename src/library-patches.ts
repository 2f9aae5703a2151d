
/**
 * What the service's reaches into a library's internals share. The reaches themselves are Agenda's (its
 * tables, payloads and internals), in src/queue/agenda-internals.ts, and the embedded PostgreSQL
 * package's binary paths, in src/db/postgres-server.ts — nowhere else. Each patch was
 * written against the versions in WRITTEN_FOR (pinned exactly in package.json), checks the shape it
 * relies on when applied and throws LibraryInternalsChanged instead of silently doing nothing, and is
 * exercised by test/library-patches.test.ts, which fails loudly on an upgrade that changes them.
 */
export const WRITTEN_FOR = {
  agenda: '6.2.6',
  '@agendajs/postgres-backend': '3.0.6',
  '@agendajs/mongo-backend': '4.0.3',
} as const;

export class LibraryInternalsChanged extends Error {
  constructor(what: string) {
    super(`library internals changed: ${what} (src/library-patches.ts and src/queue/agenda-internals.ts were written for ${Object.entries(WRITTEN_FOR).map(([name, version]) => `${name}@${version}`).join(', ')})`);
  }
}

/** Throws LibraryInternalsChanged unless `owner[method]` is a function. */
export function requireMethod(owner: unknown, method: string, what: string): void {
  if (typeof (owner as Record<string, unknown> | undefined)?.[method] !== 'function') throw new LibraryInternalsChanged(`${what}.${method} is not a function`);
}
