import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The OS identity the embedded PostgreSQL runs as. PostgreSQL refuses to run as root, so a root
 * process needs another identity, and it must reach both the binaries (under node_modules) and the
 * data directory (under DATA_DIR) without anyone changing directory modes:
 *  - not root: the process's own user, nothing to do;
 *  - root (preferred): a user namespace in which PostgreSQL has an ordinary uid that maps back to root
 *    outside. It gets root's *owner* permissions on files (so it reaches a clone inside a 0700
 *    directory, and its files stay owned by root) but no capabilities; no OS user is created;
 *  - root without user namespaces (a container without CAP_SYS_ADMIN, say): the existing `postgres`
 *    OS user, and only when every directory on the way is enterable by it; otherwise start fails with
 *    a message naming the directory, instead of changing its mode behind the owner's back.
 */
export interface PostgresIdentity {
  kind: 'self' | 'user-namespace' | 'postgres-user';
  /** For the log line at start. */
  description: string;
  /** The command line and spawn options that run `file args` as this identity. */
  command(file: string, args: string[]): { file: string; args: string[]; uid?: number; gid?: number };
  /** The uid/gid that should own the data directory (outside any namespace). */
  owner: { uid: number; gid: number };
}

interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
}

function passwd(): PasswdEntry[] {
  try {
    return fs
      .readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [name, , uid, gid] = line.split(':');
        return { name: name ?? '', uid: Number(uid), gid: Number(gid) };
      });
  } catch {
    return [];
  }
}

/** initdb and postgres look their effective uid up in /etc/passwd: the namespace uid must have an entry. */
function namespaceUser(): PasswdEntry | undefined {
  const entries = passwd().filter((entry) => entry.uid > 0 && Number.isSafeInteger(entry.uid));
  return (
    entries.find((entry) => entry.name === 'postgres') ?? entries.find((entry) => entry.name === 'nobody') ?? entries[0]
  );
}

function userNamespaceWorks(user: PasswdEntry): boolean {
  const probe = spawnSync('unshare', ['--user', `--map-user=${user.uid}`, `--map-group=${user.gid}`, 'true'], {
    stdio: 'ignore',
    timeout: 5_000,
  });
  return probe.status === 0;
}

let chosen: PostgresIdentity | undefined;

/** Decided once per process (probing user namespaces spawns `unshare` once). */
export function postgresIdentity(): PostgresIdentity {
  return (chosen ??= chooseIdentity());
}

function chooseIdentity(): PostgresIdentity {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    const owner = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
    return { kind: 'self', description: 'the service user', owner, command: (file, args) => ({ file, args }) };
  }
  const user = namespaceUser();
  if (user && userNamespaceWorks(user)) {
    return {
      kind: 'user-namespace',
      description: `root inside a user namespace (uid ${user.uid} there, no capabilities)`,
      owner: { uid: 0, gid: 0 },
      command: (file, args) => ({
        file: 'unshare',
        args: ['--user', `--map-user=${user.uid}`, `--map-group=${user.gid}`, '--', file, ...args],
      }),
    };
  }
  const postgres = passwd().find((entry) => entry.name === 'postgres');
  if (!postgres) {
    throw new Error(
      'running as root, PostgreSQL must run as another user: user namespaces are unavailable (unshare --user failed) and there is no `postgres` OS user. Run as a non-root user, create a `postgres` user, or set DATABASE_URL',
    );
  }
  return {
    kind: 'postgres-user',
    description: 'the postgres OS user',
    owner: { uid: postgres.uid, gid: postgres.gid },
    command: (file, args) => ({ file, args, uid: postgres.uid, gid: postgres.gid }),
  };
}

/**
 * For the `postgres-user` identity: the first directory on the way to `target` that user cannot
 * enter (o+x, or g+x with its group), or undefined when every one can be entered.
 */
export function firstUnreachableDirectory(target: string, identity: PostgresIdentity): string | undefined {
  if (identity.kind !== 'postgres-user') return undefined;
  let current = path.dirname(path.resolve(target));
  const chain: string[] = [];
  while (true) {
    chain.unshift(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const dir of chain) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(dir);
    } catch {
      return undefined; // not created yet: mkdir makes it with the default mode
    }
    const enterable =
      stat.uid === identity.owner.uid
        ? (stat.mode & 0o100) !== 0
        : stat.gid === identity.owner.gid
          ? (stat.mode & 0o010) !== 0
          : (stat.mode & 0o001) !== 0;
    if (!enterable) return dir;
  }
  return undefined;
}
