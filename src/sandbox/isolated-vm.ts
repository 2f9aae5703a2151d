import type IsolatedVM from 'isolated-vm';

/**
 * isolated-vm, in the major that fits the running Node: no single major builds on every LTS line
 * (5 is the last for Node 20 and does not compile against Node 24's headers; 6 needs Node 22, 7 needs 24).
 * package.json lists each as an optional npm alias: npm skips 6 and 7 where their `engines` exclude the
 * running Node, and drops 5 where it fails to build (Node 24; on 22 it builds but goes unused). This module
 * loads the newest one present that loads, and is the only place that names them. Their API is the same;
 * the types come from whichever is installed (tsconfig `paths`).
 */
const CANDIDATES = ['isolated-vm-7', 'isolated-vm-6', 'isolated-vm-5'] as const;

function load(): { library: typeof IsolatedVM; name: string } {
  const failures: string[] = [];
  for (const name of CANDIDATES) {
    try {
      return { library: require(name) as typeof IsolatedVM, name };
    } catch (error) {
      const err = error as NodeJS.ErrnoException;
      // Not installed on this Node line: npm skipped it (engines) or dropped it (its build failed).
      if (err.code === 'MODULE_NOT_FOUND' && err.message.includes(`'${name}'`)) continue;
      failures.push(`${name}: ${err.message.split('\n')[0]}`);
    }
  }
  throw new Error(
    `isolated-vm: no installed major loads in Node ${process.version} (ABI ${process.versions.modules}). ` +
      `Run \`npm install\` again with this Node${failures.length ? `; ${failures.join('; ')}` : ''}`,
  );
}

const loaded = load();
const ivm = loaded.library;
/** Which alias serves (isolated-vm-5, -6 or -7). */
export const isolatedVmPackage = loaded.name;

// The library's classes as types too (`ivm.Isolate`, `ivm.Reference<T>`), as `import ivm from 'isolated-vm'` gave.
// eslint-disable-next-line @typescript-eslint/no-namespace
declare namespace ivm {
  export type Isolate = IsolatedVM.Isolate;
  export type Context = IsolatedVM.Context;
  export type Script = IsolatedVM.Script;
  export type Reference<T = unknown> = IsolatedVM.Reference<T>;
  export type ExternalCopy<T = unknown> = IsolatedVM.ExternalCopy<T>;
}

export default ivm;
