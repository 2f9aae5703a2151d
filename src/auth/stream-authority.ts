import type { Sequelize } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type { Logger } from '../logger';
import { listen, type Listening } from '../db/listen';
import { User } from '../models';
import { runPermits } from '../policies/run.policy';
import { AUTH_CHANGED_CHANNEL } from './token-cache';
import type { Authentication } from './authenticate';

/** What an open stream of a run's events relies on: who reads (and with which token), and the run. */
export interface StreamGrant {
  auth: Authentication;
  runUid: string;
  runOwnerUid: string;
}

interface Watched {
  grant: StreamGrant;
  viewerUid: string | null;
  lost(): void;
}

/**
 * Authority re-checked on open streams: every stream of a run's events (REST SSE,
 * graphql-sse — one subscription behind both) is watched here, and each `auth_changed`
 * notification (a token revoked or deleted, a user changed or deleted — migration 0009 — and a run's
 * visibility changed — migration 0025, with the run owner's uid) re-checks the streams of that user,
 * as reader or as the run's owner, against the same read rule as a new request. A stream that lost
 * its authority is ended. While the LISTEN connection is down nothing can be heard, so every stream
 * is re-checked when it is back.
 */
export class StreamAuthority {
  private readonly watched = new Set<Watched>();
  private listening: Listening | undefined;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly log: Logger,
  ) {}

  async start(databaseUrl: string): Promise<void> {
    let heard = false;
    this.listening = await listen({
      databaseUrl,
      log: this.log,
      channel: AUTH_CHANGED_CHANNEL,
      applicationName: 'circuit-stream-authority',
      onNotification: (payload) => void this.recheck(payload || undefined),
      onListening: () => {
        if (heard) void this.recheck();
        heard = true;
      },
    });
  }

  async stop(): Promise<void> {
    await this.listening?.close();
    this.watched.clear();
  }

  /** Calls `lost` (once) when `grant` no longer allows reading the run; returns the function that stops watching. */
  watch(grant: StreamGrant, lost: () => void): () => void {
    const entry: Watched = { grant, viewerUid: grant.auth.kind === 'token' ? grant.auth.user.uid : null, lost };
    this.watched.add(entry);
    return () => {
      this.watched.delete(entry);
    };
  }

  /** Re-checks the streams of `userUid` (as reader or run owner), or all of them. */
  private async recheck(userUid?: string): Promise<void> {
    const affected = [...this.watched].filter(
      (w) => !userUid || w.viewerUid === userUid || w.grant.runOwnerUid === userUid,
    );
    await Promise.all(
      affected.map(async (entry) => {
        try {
          if (await this.allowed(entry.grant)) return;
        } catch (error) {
          this.log.warn({ err: error }, 'could not re-check an open stream; it stays open');
          return;
        }
        if (!this.watched.delete(entry)) return;
        entry.lost();
      }),
    );
  }

  private async allowed({ auth, runUid }: StreamGrant): Promise<boolean> {
    const viewerUid = auth.kind === 'token' ? auth.user.uid : null;
    const tokenHash = auth.kind === 'token' ? (auth.tokenHash ?? null) : null;
    const [row] = await this.sequelize.query<{ user_uid: string; is_public: boolean; token_ok: boolean }>(
      `SELECT r.user_uid, r.is_public,
              ($2::text IS NULL OR EXISTS (SELECT 1 FROM api_tokens t WHERE t.token_hash = $2 AND t.revoked_at IS NULL AND t.user_uid = $3::uuid)) AS token_ok
         FROM circuit_runs r WHERE r.uid = $1::uuid`,
      { bind: [runUid, tokenHash, viewerUid], type: QueryTypes.SELECT },
    );
    if (!row || !row.token_ok) return false;
    const viewer = viewerUid ? await User.findByPk(viewerUid) : null;
    if (viewerUid && !viewer) return false;
    return runPermits(viewer, row, 'read');
  }
}
