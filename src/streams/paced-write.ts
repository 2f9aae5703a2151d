import crypto from 'node:crypto';
import type { Writable } from 'node:stream';

/** The most of one text handed to a socket at once: a paused reader holds at most about this much. */
export const WRITE_SLICE_BYTES = 64 * 1024;

/** A text as the bytes sent: written as views of one buffer, so no reader makes (or leaves as garbage) its own copy. */
export interface Held {
  bytes: Buffer;
  /** The ETag of `bytes`, once a writer has computed it (the same bytes, the same tag). */
  etag?: string;
}

/** Resolves once `out` wants more (drain) or is gone (close, error). */
function drained(out: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done).off('close', done).off('error', done);
      resolve();
    };
    out.on('drain', done).on('close', done).on('error', done);
  });
}

/**
 * Identical large texts (the same run's 4 MiB result sent to many readers) share one copy of their
 * bytes while any reader still writes it: a paused reader then costs its slice in the socket, not a
 * copy of the text.
 */
export class SharedTexts {
  private readonly texts = new Map<string, WeakRef<Held>>();
  private readonly forget = new FinalizationRegistry<string>((key) => {
    if (!this.texts.get(key)?.deref()) this.texts.delete(key);
  });

  /** The shared bytes of `text` (keep the holder referenced while writing). */
  share(text: string): Held {
    return this.remember(`#${crypto.createHash('sha256').update(text).digest('base64')}`, () => text);
  }

  /**
   * The text known by `key` while any reader still writes it, else `make()`'s: readers of the same
   * event as the same viewer then never even make their own copy (nor its garbage).
   */
  byKey(key: string, make: () => string): () => Held {
    return () => this.remember(`=${key}`, make);
  }

  private remember(key: string, make: () => string): Held {
    const known = this.texts.get(key)?.deref();
    if (known) return known;
    const holder = { bytes: Buffer.from(make()) };
    this.texts.set(key, new WeakRef(holder));
    this.forget.register(holder, key);
    return holder;
  }
}

/**
 * The bytes to write, made here (and, when large, swapped for the shared copy) before anything
 * waits: a suspended async frame keeps its temporaries, so a reader's own copy must never live in one.
 */
function held(make: () => string | Held, shared: SharedTexts | undefined): Held | string {
  const made = make();
  if (typeof made !== 'string') return made;
  if (made.length <= WRITE_SLICE_BYTES) return made;
  return shared ? shared.share(made) : { bytes: Buffer.from(made) };
}

/**
 * Writes what `make` returns with back-pressure: slice by slice (views of one buffer), each only
 * once the socket has taken the one before. Resolves false when the connection went away first.
 */
export async function writePaced(out: Writable, make: () => string | Held, shared?: SharedTexts): Promise<boolean> {
  if (out.destroyed || out.writableEnded) return false;
  const holder = held(make, shared);
  if (typeof holder === 'string') {
    if (!out.write(holder)) await drained(out);
    return !out.destroyed;
  }
  for (let at = 0; at < holder.bytes.length; at += WRITE_SLICE_BYTES) {
    if (out.destroyed || out.writableEnded) return false;
    if (!out.write(holder.bytes.subarray(at, at + WRITE_SLICE_BYTES))) await drained(out);
  }
  return !out.destroyed;
}

/** An iterator's next value taken out of its result (so that only the writer holds it), for writePaced. */
export function takeValue<T>(result: { value?: T }): () => T {
  const value = result.value as T;
  result.value = undefined;
  let taken: T | undefined = value;
  return () => {
    const out = taken as T;
    taken = undefined;
    return out;
  };
}
