import { CircuitRun } from '../../models/CircuitRun';
import { isTerminal } from '../../domain/runs';
import type { RunDeps } from '../ports';

/**
 * Resolves once the run is terminal or `ms` have passed (`Prefer: wait`, `waitSeconds`, cancel's
 * answer). Waits on the event bus: no database connection and no worker slot is held meanwhile; the
 * state is read once after subscribing (so an end just before is not missed) and every few seconds
 * (so a notification lost while the bus reconnected costs at most that).
 */
export async function waitForRunEnd(deps: RunDeps, uid: string, ms: number): Promise<void> {
  if (ms <= 0) return;
  let done!: () => void;
  const ended = new Promise<void>((resolve) => {
    done = resolve;
  });
  const unsubscribe = deps.bus.subscribe(uid, (message) => {
    if (message.state && isTerminal(message.state)) done();
  });
  const timers = [setTimeout(done, ms)];
  const check = async () => {
    const run = await CircuitRun.findByPk(uid, { attributes: ['uid', 'state'] });
    if (!run || isTerminal(run.state)) done();
  };
  timers.push(
    setInterval(() => {
      void check().catch(() => {});
    }, 5_000),
  );
  try {
    await check();
    await ended;
  } finally {
    for (const timer of timers) clearTimeout(timer);
    unsubscribe();
  }
}
