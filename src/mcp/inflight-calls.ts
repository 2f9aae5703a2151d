import { IdempotencyKey } from '../models/IdempotencyKey';
import { CircuitRun } from '../models/CircuitRun';
import { isTerminal } from '../domain/runs';
import type { User } from '../models';
import { runPermits } from '../policies/run.policy';
import type { ApiServices } from '../graphql/context';

/**
 * A `tools/call` in progress in this process. Each POST to /mcp gets its own MCP server (stateless
 * transport), so the client's `notifications/cancelled` arrives at another server than the call it
 * names: the call registers here under its key, and the cancel finds it.
 */
export interface InflightCall {
  /** Set once the run exists. */
  runUid?: string;
  canceled: boolean;
  /** Ends the call's HTTP response without an answer (a cancelled request gets none). */
  close(): void;
}

/** How long a cancel whose call is in no process's registry looks for its run (a call in another API process may still be creating it). */
const LOOKUP_MS = 3_000;
const LOOKUP_EVERY_MS = 250;

export class InflightCalls {
  private readonly calls = new Map<string, InflightCall>();

  register(key: string, close: () => void): InflightCall {
    const call: InflightCall = { canceled: false, close };
    this.calls.set(key, call);
    return call;
  }

  unregister(key: string, call: InflightCall): void {
    if (this.calls.get(key) === call) this.calls.delete(key);
  }

  /**
   * Cancels the call with this key (its idempotency key, so the caller's own): the run is canceled as
   * REST's cancel does (docs/runs.md, Cancel) and the call's response is closed. A call running in another API
   * process is found through its idempotency key; that process answers it once the run has ended.
   */
  async cancel(services: ApiServices, viewer: User, key: string): Promise<void> {
    const local = this.calls.get(key);
    if (local) {
      local.canceled = true;
      local.close();
      // Without a run yet, the call cancels it once createRun returns (callCircuitTool).
      if (local.runUid) await cancelOwnRun(services, viewer, local.runUid);
      return;
    }
    const deadline = Date.now() + LOOKUP_MS;
    for (;;) {
      const record = await IdempotencyKey.findOne({ where: { user_uid: viewer.uid, key }, attributes: ['run_uid'] });
      // A key of a bulk action names no run: nothing to cancel.
      if (record) return record.run_uid === null ? undefined : cancelOwnRun(services, viewer, record.run_uid);
      if (Date.now() > deadline || this.calls.has(key)) break;
      await new Promise((resolve) => setTimeout(resolve, LOOKUP_EVERY_MS));
    }
    const late = this.calls.get(key);
    if (late) await this.cancel(services, viewer, key);
  }
}

/** The REST cancel, for the caller's own run only; a terminal run is left as it is. */
export async function cancelOwnRun(services: ApiServices, viewer: User, uid: string): Promise<void> {
  const run = await CircuitRun.findByPk(uid, { attributes: ['uid', 'user_uid', 'is_public', 'state'] });
  if (!run || !runPermits(viewer, run, 'cancel') || isTerminal(run.state)) return;
  await services.runs.cancel(run.uid);
}
