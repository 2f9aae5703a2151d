/**
 * Fair webhook delivery (docs/fairness.md): attempts are admitted per receiver (the URL's host and
 * port), so a receiver that never answers holds at most `concurrency` of a worker's delivery slots
 * instead of all of them, and a circuit breaker stops knocking on one that keeps timing out. They are
 * also admitted per user (the run's owner), so one user's webhooks pointed at many receivers that
 * never answer hold at most `userConcurrency` of the slots. An attempt not admitted is not made and
 * not counted: its message simply comes back later, so the job slot goes at once to the next message,
 * another receiver's or another user's.
 *
 * Per worker process, in memory: each worker judges the receivers it talks to on its own.
 */
export interface ReceiverGateOptions {
  /** Attempts in flight at once per receiver (WEBHOOK_HOST_CONCURRENCY). */
  concurrency: number;
  /** Attempts in flight at once per user, over all receivers (WEBHOOK_USER_SHARE_PERCENT of the worker's slots). */
  userConcurrency?: number;
  /** Unanswered attempts in a row that open the breaker (WEBHOOK_BREAKER_FAILURES). */
  failuresToOpen: number;
  /** How long an open breaker holds the receiver's messages; doubled each time a probe fails, up to 16×. */
  openMs: number;
  now?: () => number;
  random?: () => number;
}

/** An attempt admitted: call `done` with whether the receiver answered at all (any status counts). */
export interface Admitted {
  admitted: true;
  done(answered: boolean): void;
}
/**
 * Not admitted: try again at `retryAt`. `breaker` says whether the receiver's breaker is open. `by`
 * says what was full: the receiver (busy or open) or the user's share. With `putOff` (at most once a
 * second per receiver, or per user) the caller puts off all of that receiver's (or that user's) due
 * messages at once, to times spread over `spreadMs` after `from`.
 */
export interface Deferred {
  admitted: false;
  retryAt: Date;
  breaker: boolean;
  by: 'receiver' | 'user';
  receiver: string;
  /** The user whose share was full (`by: 'user'`). */
  user?: string;
  putOff?: { from: Date; spreadMs: number };
}

/** One user's attempts in flight in this worker, and when their due messages were last put off together. */
interface UserShare {
  inFlight: number;
  deferred: number;
  windowStart: number;
  lastPutOff: number;
}

interface Receiver {
  inFlight: number;
  /** Unanswered attempts in a row. */
  failures: number;
  /** While open: attempts wait until then; afterwards one probe goes, the rest wait for its verdict. */
  openUntil: number;
  openMs: number;
  probing: boolean;
  /** Messages sent away in the current window: spreads their return over the backlog. */
  deferred: number;
  windowStart: number;
  lastPutOff: number;
}

/** How long a deferral window lasts, and how much later each deferred message of it may come back. */
const WINDOW_MS = 5_000;
const SPREAD_PER_MESSAGE_MS = 50;
const MAX_SPREAD_MS = 30_000;
/** How often one receiver's due messages are put off together, and over how long when it is only busy. */
const PUT_OFF_EVERY_MS = 1_000;
const BUSY_SPREAD_MS = 9_000;

export class ReceiverGate {
  private readonly receivers = new Map<string, Receiver>();
  private readonly users = new Map<string, UserShare>();
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(private readonly options: ReceiverGateOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  /** The receiver a URL names (host and port; an unparsable URL is its own receiver). */
  static keyOf(url: string): string {
    try {
      const parsed = new URL(url);
      return `${parsed.protocol}//${parsed.host.toLowerCase()}`;
    } catch {
      return url;
    }
  }

  /**
   * Admits an attempt at a message to `url` of `user` (the run's owner; null when unknown, which is
   * not counted against any share), or says when to come back.
   */
  admit(url: string, user: string | null = null): Admitted | Deferred {
    const key = ReceiverGate.keyOf(url);
    const now = this.now();
    let receiver = this.receivers.get(key);
    if (!receiver) {
      receiver = {
        inFlight: 0,
        failures: 0,
        openUntil: 0,
        openMs: this.options.openMs,
        probing: false,
        deferred: 0,
        windowStart: now,
        lastPutOff: 0,
      };
      this.receivers.set(key, receiver);
    }
    if (receiver.openUntil > now) return this.defer(key, receiver, receiver.openUntil, true);
    const halfOpen = receiver.openUntil > 0;
    if (halfOpen && receiver.probing) return this.defer(key, receiver, now + 1_000, true);
    if (receiver.inFlight >= this.options.concurrency) return this.defer(key, receiver, now + 1_000, false);
    let share: UserShare | undefined;
    if (user !== null && this.options.userConcurrency !== undefined) {
      share = this.users.get(user);
      if (!share) {
        share = { inFlight: 0, deferred: 0, windowStart: now, lastPutOff: 0 };
        this.users.set(user, share);
      }
      if (share.inFlight >= this.options.userConcurrency) {
        // Not the receiver's doing: its breaker and backlog stay as they are.
        if (receiver.inFlight === 0 && receiver.failures === 0 && receiver.openUntil === 0) this.receivers.delete(key);
        return this.deferUser(key, user, share);
      }
      share.inFlight++;
    }
    receiver.inFlight++;
    if (halfOpen) receiver.probing = true;
    let finished = false;
    return {
      admitted: true,
      done: (answered) => {
        if (finished) return;
        finished = true;
        if (share && user !== null) {
          share.inFlight--;
          if (share.inFlight === 0 && this.users.get(user) === share) this.users.delete(user);
        }
        this.finish(key, receiver, answered, halfOpen);
      },
    };
  }

  /** Attempts of `user` in flight now (0 when none). */
  inFlightOf(user: string): number {
    return this.users.get(user)?.inFlight ?? 0;
  }

  private finish(key: string, receiver: Receiver, answered: boolean, probe: boolean): void {
    receiver.inFlight--;
    if (probe) receiver.probing = false;
    if (answered) {
      receiver.failures = 0;
      receiver.openUntil = 0;
      receiver.openMs = this.options.openMs;
    } else {
      receiver.failures++;
      if (probe || receiver.failures >= this.options.failuresToOpen) {
        if (probe) receiver.openMs = Math.min(receiver.openMs * 2, this.options.openMs * 16);
        receiver.openUntil = this.now() + receiver.openMs;
      }
    }
    if (receiver.inFlight === 0 && receiver.failures === 0 && receiver.openUntil === 0) this.receivers.delete(key);
  }

  private defer(key: string, receiver: Receiver, earliest: number, breaker: boolean): Deferred {
    const now = this.now();
    if (now - receiver.windowStart > WINDOW_MS) {
      receiver.windowStart = now;
      receiver.deferred = 0;
    }
    receiver.deferred++;
    // Spread over the backlog, so hundreds of waiting messages do not all come back at once.
    const spread = Math.min(MAX_SPREAD_MS, Math.max(1_000, receiver.deferred * SPREAD_PER_MESSAGE_MS));
    const deferred: Deferred = {
      admitted: false,
      retryAt: new Date(earliest + Math.floor(this.random() * spread)),
      breaker,
      by: 'receiver',
      receiver: key,
    };
    if (now - receiver.lastPutOff >= PUT_OFF_EVERY_MS) {
      receiver.lastPutOff = now;
      // Open: until it may be probed again, over one more open period. Busy: over the time an attempt may take.
      deferred.putOff = breaker
        ? { from: new Date(earliest), spreadMs: receiver.openMs }
        : { from: new Date(earliest), spreadMs: BUSY_SPREAD_MS };
    }
    return deferred;
  }

  /**
   * The user's share is full: the message comes back once an attempt of theirs may have ended, and at
   * most once a second all of the user's due messages are put off together (as a busy receiver's are).
   */
  private deferUser(key: string, user: string, share: UserShare): Deferred {
    const now = this.now();
    if (now - share.windowStart > WINDOW_MS) {
      share.windowStart = now;
      share.deferred = 0;
    }
    share.deferred++;
    const spread = Math.min(MAX_SPREAD_MS, Math.max(1_000, share.deferred * SPREAD_PER_MESSAGE_MS));
    const earliest = now + 1_000;
    const deferred: Deferred = {
      admitted: false,
      retryAt: new Date(earliest + Math.floor(this.random() * spread)),
      breaker: false,
      by: 'user',
      receiver: key,
      user,
    };
    if (now - share.lastPutOff >= PUT_OFF_EVERY_MS) {
      share.lastPutOff = now;
      deferred.putOff = { from: new Date(earliest), spreadMs: BUSY_SPREAD_MS };
    }
    return deferred;
  }
}
