/** What one upload holds while it streams: a grant to give back once its request is over. */
export type ReleaseSlot = () => void;

export interface UploadSlotLimits {
  /** Uploads of one user read at once; the user's others wait, unread. */
  perUser: number;
  /** Uploads read at once in the process, all users together. */
  total: number;
  /** Uploads of one user that may wait; one more is refused. */
  waitingPerUser: number;
}

export interface UploadSlots {
  /** Resolves once the owner may read an upload, or to null when too many of theirs already wait. */
  acquire(owner: string): Promise<ReleaseSlot | null>;
  /** Uploads being read now, all owners together. */
  active(): number;
}

/**
 * Admission of blob uploads. Each upload read costs the event loop parsing, hashing and handing
 * chunks to storage, and a thread of libuv's pool for each file write: how much of that one turn of
 * the loop carries grows with the number of uploads read at once, not with their size. Bounding
 * uploads in flight (per user and in all) bounds it, whatever one client opens. Waiting uploads are
 * not read; a freed slot goes to the next user in turn, so one user's many uploads never queue
 * ahead of another user's one.
 */
export function createUploadSlots(limits: UploadSlotLimits): UploadSlots {
  const activeByOwner = new Map<string, number>();
  // Insertion order is the turn order: a user served goes to the back.
  const waiting = new Map<string, Array<(release: ReleaseSlot) => void>>();
  let activeTotal = 0;

  const grant = (owner: string): ReleaseSlot => {
    activeTotal += 1;
    activeByOwner.set(owner, (activeByOwner.get(owner) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      activeTotal -= 1;
      const left = (activeByOwner.get(owner) ?? 1) - 1;
      if (left === 0) activeByOwner.delete(owner);
      else activeByOwner.set(owner, left);
      admitNext();
    };
  };

  const admitNext = () => {
    for (const [owner, queue] of waiting) {
      if (activeTotal >= limits.total) return;
      if ((activeByOwner.get(owner) ?? 0) >= limits.perUser) continue;
      const next = queue.shift()!;
      waiting.delete(owner);
      if (queue.length > 0) waiting.set(owner, queue);
      next(grant(owner));
      return admitNext();
    }
  };

  return {
    acquire(owner) {
      const mine = activeByOwner.get(owner) ?? 0;
      if (mine < limits.perUser && activeTotal < limits.total && !waiting.has(owner))
        return Promise.resolve(grant(owner));
      const queue = waiting.get(owner) ?? [];
      if (queue.length >= limits.waitingPerUser) return Promise.resolve(null);
      waiting.set(owner, queue);
      return new Promise((resolve) => queue.push(resolve));
    },
    active: () => activeTotal,
  };
}
