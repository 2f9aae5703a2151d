import fs from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const state = (globalThis as { __embedded?: { embedded: { stop(): Promise<void> }; dir: string } }).__embedded;
  if (!state) return;
  await state.embedded.stop();
  fs.rmSync(state.dir, { recursive: true, force: true });
}
