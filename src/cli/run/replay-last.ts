import { Op } from 'sequelize';
import { CircuitRun } from '../../models/CircuitRun';
import { TERMINAL_STATES, isTerminal } from '../../domain/runs';
import { createLogger } from '../../logger';
import { compareRuns, REPLAY_MODES } from '../../runs';
import { startRuntime } from '../../runtime';
import { Sandbox } from '../../sandbox/sandbox';
import { withDatabase } from '../database';
import type { CliIo } from '../io';
import { findCircuit, findUser } from '../present';
import { CliError } from '../output';
import { createJsonSchemaService } from '../../engine/json-schemas';

export interface RunReplayLastOptions {
  username: string;
  circuit: string;
  version: string;
  count?: string;
  mode?: string;
  timeoutS?: string;
}

const positive = (value: string | undefined, fallback: number, name: string, max: number): number => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new CliError(`--${name} must be a whole number from 1 to ${max}`);
  return n;
};

/**
 * "What would the new version have done on yesterday's runs" (docs/runs.md, Replay and compare): replays the user's last
 * `count` terminal runs of their circuit (replays themselves excluded) against `version`, waits for the
 * replays (a worker must be running: `npm start` or `circuits worker`), and prints for each the compare
 * summary: the output's status and each step's (same | changed | added | removed).
 */
export async function runReplayLast(io: CliIo, options: RunReplayLastOptions) {
  const count = positive(options.count, 5, 'count', 100);
  const timeoutMs = positive(options.timeoutS, 300, 'timeout-s', 3600) * 1000;
  const mode = options.mode ?? 'recorded';
  if (!(REPLAY_MODES as readonly string[]).includes(mode)) throw new CliError('--mode must be recorded or live');
  return withDatabase(io, async ({ config, sequelize, databaseUrl }) => {
    const user = await findUser(options.username);
    const circuit = await findCircuit(user, options.circuit);
    const originals = await CircuitRun.findAll({
      where: {
        circuit_uid: circuit.uid,
        user_uid: user.uid,
        state: { [Op.in]: [...TERMINAL_STATES] },
        replay_of: null,
      },
      order: [
        ['created_at', 'DESC'],
        ['uid', 'DESC'],
      ],
      limit: count,
    });
    const log = createLogger('silent');
    const schemas = createJsonSchemaService();
    const sandbox = new Sandbox();
    // The run wing admits the replays and queues their jobs; this process executes nothing.
    const runtime = await startRuntime({ config, sequelize, log, databaseUrl, worker: null, schemas, sandbox });
    try {
      const pairs: Array<{ original: CircuitRun; replay: string }> = [];
      for (const original of originals) {
        const { run } = await runtime.runs.replay(user, original, { mode, versionUid: options.version });
        pairs.push({ original, replay: run.uid });
      }
      const deadline = Date.now() + timeoutMs;
      const ended = new Map<string, CircuitRun>();
      while (ended.size < pairs.length) {
        const rows = await CircuitRun.findAll({
          where: { uid: pairs.map((p) => p.replay).filter((uid) => !ended.has(uid)) },
        });
        for (const row of rows) if (isTerminal(row.state)) ended.set(row.uid, row);
        if (ended.size === pairs.length) break;
        if (Date.now() > deadline) {
          throw new CliError(
            `${pairs.length - ended.size} replay(s) did not end within ${timeoutMs / 1000} s (is a worker running?): ${pairs
              .map((p) => p.replay)
              .filter((uid) => !ended.has(uid))
              .join(', ')}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const runs = pairs.map(({ original, replay }) => {
        const run = ended.get(replay)!;
        const comparison = compareRuns(original, run);
        return {
          original_uid: original.uid,
          replay_uid: run.uid,
          original_state: original.state,
          state: run.state,
          output: comparison.output.status,
          steps: Object.fromEntries(Object.entries(comparison.steps).map(([id, step]) => [id, step.status])),
        };
      });
      return {
        circuit_uid: circuit.uid,
        version_uid: options.version,
        mode,
        replayed: runs.length,
        same: runs.filter((r) => r.output === 'same' && r.state === r.original_state).length,
        changed: runs.filter((r) => r.output !== 'same' || r.state !== r.original_state).length,
        runs,
      };
    } finally {
      await runtime.close().catch(() => {});
      await Promise.all([schemas.close(), sandbox.close()]);
    }
  });
}
